/**
 * One consumer-group member of the Kafka bus: a kafkajs consumer whose offsets are committed by
 * hand, only after the handler resolved. By default one message of a partition at a time
 * (eachMessage): a failed message is retried in place (the partition waits) and, on rebalance or
 * stop, the consumer seeks back to it so nothing after it is committed first. With
 * `perPartitionConcurrency` above 1 (eachBatch), see batch-window.ts.
 */
import type { Consumer, EachBatchPayload, EachMessagePayload, IHeaders, Kafka } from 'kafkajs';
import { CRASHED, deliver } from '../delivery.ts';
import {
  dlqTopic,
  type BusMessage,
  type BusObserver,
  type CrashableSubscription,
  type DeliveredMessage,
  type SubscribeOptions,
} from '../port.ts';
import { backoffDelay } from '../../backoff.ts';
import { concurrencyOf, type RetryBackoff } from '../shared.ts';
import {
  finishMessage,
  hasSlotFor,
  openWindow,
  rereadFrom,
  startMessage,
  startedAlready,
  stopRunning,
  type BatchWindow,
} from './batch-window.ts';
import type { KafkaConnections } from './connections.ts';
import { committedOffset, pinStartOffsets, type SubscribedGroups } from './offsets.ts';
import type { Logger } from '../../logger.ts';
import { DEFAULT_CONSUMER_TUNING, type KafkaConsumerTuning } from './options.ts';
import { createRevival } from './revival.ts';
import type { TopicSetup } from './topics.ts';
import { asKafkaRetryable, toStringHeaders, withTimeout } from './util.ts';

/** What a member's subscription needs from the bus it belongs to. */
export interface MemberContext {
  kafka: Kafka;
  connections: KafkaConnections;
  topics: TopicSetup;
  /** The bus's publish path (dead letters go through it). */
  send(topic: string, messages: readonly BusMessage[]): Promise<void>;
  /** Partitions of the bus's topics. */
  partitions: number;
  retryBackoff: Required<RetryBackoff>;
  joinTimeoutMs: number;
  reviveDelayMs: number;
  consumerTuning: KafkaConsumerTuning | undefined;
  logger: Logger | undefined;
  observer: BusObserver | undefined;
  /** The bus's groups (their lag is reported); this member adds its own. */
  subscribed: SubscribedGroups;
  /** The bus's live members, stopped on close; this member adds and removes itself. */
  members: Set<Member>;
  isClosed(): boolean;
}

export interface Member {
  stop(): Promise<void>;
}

/** How one delivery ended: handled (or dead-lettered), given up between attempts, or a crash. */
type Outcome = 'done' | 'interrupted' | 'crashed';

/** Bound on one attempt of a member's connect and first subscribe. */
const CONNECT_ATTEMPT_MS = 10_000;

/**
 * The consumer's connect and its first metadata request (subscribe), tried again until `deadline`:
 * on a node so loaded that a broker's first answer is late, kafkajs's connect can fail, or succeed
 * and leave `subscribe` with a plain 'Broker not connected'; both exited an extractor in a CI run.
 * The consumer is disconnected between attempts, so each starts clean.
 */
async function connectAndSubscribe(
  consumer: Consumer,
  topics: readonly string[],
  deadline: number,
  onRetry: (attempt: number, error: unknown, retryInMs: number) => void,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      // kafkajs's own retries inside connect can outlast the deadline (30 s per request timeout),
      // and a connection whose first request went unanswered stays stuck that long: each attempt
      // gets at most CONNECT_ATTEMPT_MS, then the next starts on a fresh connection.
      await withTimeout(
        (async () => {
          await consumer.connect();
          await consumer.subscribe({ topics: [...topics], fromBeginning: true });
        })(),
        Math.max(1, Math.min(CONNECT_ATTEMPT_MS, deadline - Date.now())),
        'kafka consumer connect',
      );
      return;
    } catch (error) {
      await consumer.disconnect().catch(() => undefined);
      const delay = backoffDelay({ baseMs: 250, maxMs: 2_000 }, attempt);
      if (Date.now() + delay >= deadline) throw error;
      onRetry(attempt, error, delay);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/** Joins `subscribeOptions.groupId` and consumes until stopped (or crashed, in tests). */
export async function startMember(
  ctx: MemberContext,
  subscribeOptions: SubscribeOptions,
): Promise<CrashableSubscription> {
  if (ctx.isClosed()) throw new Error('event bus is closed');
  const { logger, observer } = ctx;
  const { groupId, topics, handler } = subscribeOptions;
  const maxAttempts = subscribeOptions.maxAttempts ?? 3;
  const concurrency = concurrencyOf(subscribeOptions);
  const perPartition = concurrency.perPartition;
  // The partitions kafkajs hands us at once; with eachBatch also the cap on messages in flight.
  const partitionsAtOnce = concurrency.maxInFlight ?? ctx.partitions;
  const maxInFlight = concurrency.maxInFlight ?? perPartition * ctx.partitions;
  await ctx.topics.ensureExact(topics);
  const pins = subscribeOptions.fromBeginning
    ? new Map<string, bigint>()
    : await pinStartOffsets(await ctx.connections.getAdmin(), groupId, topics);

  const tuning = { ...DEFAULT_CONSUMER_TUNING, ...ctx.consumerTuning };
  const consumer: Consumer = ctx.kafka.consumer({
    groupId,
    allowAutoTopicCreation: false,
    sessionTimeout: tuning.sessionTimeout,
    heartbeatInterval: tuning.heartbeatInterval,
    rebalanceTimeout: tuning.rebalanceTimeout,
    ...(tuning.maxWaitTimeInMs === undefined ? {} : { maxWaitTimeInMs: tuning.maxWaitTimeInMs }),
    // Reconnect backoff of the group's connections capped (kafkajs: up to 30 s per retry).
    retry: { initialRetryTime: 100, maxRetryTime: 2_000, retries: 8 },
  });
  const heartbeatEveryMs = tuning.heartbeatInterval;

  let state: 'running' | 'stopping' | 'crashed' = 'running';
  // A function, so checks after an await are not narrowed away by the compiler.
  const crashed = (): boolean => state === 'crashed';
  let interrupt!: () => void;
  const interrupted = new Promise<void>((resolve) => (interrupt = resolve));
  const inFlight = new Set<Promise<void>>();
  const revival = createRevival({
    consumer,
    groupId,
    initialDelayMs: ctx.reviveDelayMs,
    isRunning: () => state === 'running',
    logger,
    observer,
  });

  const waitBackoff = async (ms: number, heartbeat: () => Promise<void>): Promise<'done' | 'interrupted'> => {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (state !== 'running') return 'interrupted';
      try {
        // Also how we learn that the group is rebalancing while this partition waits. With
        // eachBatch nothing waits for us to rejoin, so the retry goes on (at least once).
        await heartbeat();
      } catch {
        if (perPartition === 1) return 'interrupted';
      }
      const slice = Math.min(deadline - Date.now(), heartbeatEveryMs);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([interrupted, new Promise((resolve) => (timer = setTimeout(resolve, slice)))]);
      clearTimeout(timer);
    }
    return state === 'running' ? 'done' : 'interrupted';
  };

  const runHandler = async (message: DeliveredMessage, heartbeat: () => Promise<void>): Promise<unknown> => {
    // A long handler must not cost the member its place in the group.
    const keepAlive = setInterval(() => void heartbeat().catch(() => undefined), heartbeatEveryMs);
    try {
      const outcome = handler(message).then(
        () => null,
        (error: unknown) => error ?? new Error('handler threw a nullish value'),
      );
      // On crash the handler is abandoned where it stands.
      return await Promise.race([outcome, interrupted.then(() => (crashed() ? 'crashed' : outcome))]);
    } finally {
      clearInterval(keepAlive);
    }
  };

  const commit = (topic: string, partition: number, offset: string): Promise<void> =>
    consumer.commitOffsets([{ topic, partition, offset: (BigInt(offset) + 1n).toString() }]);

  /** Runs the handler (retries and dead letter included: delivery.ts); the caller commits. */
  const processMessage = async (
    topic: string,
    partition: number,
    raw: { offset: string; key: Buffer | null; value: Buffer | null; headers?: IHeaders },
    heartbeat: () => Promise<void>,
  ): Promise<Outcome> => {
    const outcome = await deliver({
      topic,
      partition,
      offset: raw.offset,
      groupId,
      key: raw.key === null ? null : raw.key.toString('utf8'),
      value: raw.value ?? Buffer.alloc(0),
      headers: toStringHeaders(raw.headers),
      maxAttempts,
      retryBackoff: ctx.retryBackoff,
      observer,
      runHandler: async (message) => {
        const error = await runHandler(message, heartbeat);
        return crashed() ? CRASHED : error;
      },
      publishDeadLetter: (deadLetter) => ctx.send(dlqTopic(topic), [deadLetter]),
      waitBackoff: async (ms) =>
        (await waitBackoff(ms, heartbeat)) === 'done' ? 'done' : crashed() ? 'crashed' : 'interrupted',
      onFailure: (error, attempt) =>
        logger?.warn({ topic, partition, offset: raw.offset, attempt, err: String(error) }, 'handler failed'),
    });
    if (outcome === 'handled') revival.progressed();
    return outcome === 'handled' || outcome === 'dead-lettered' ? 'done' : outcome;
  };

  // The member's partitions and (eachBatch) their windows, both of the current generation: a
  // rebalance starts fresh windows from the committed offsets.
  let assignment: Record<string, number[]> = {};
  let windows = new Map<string, BatchWindow>();
  consumer.on(consumer.events.GROUP_JOIN, (event) => {
    assignment = event.payload.memberAssignment;
    for (const window of windows.values()) window.stale = true;
    windows = new Map();
  });
  const owns = (topic: string, partition: number): boolean => assignment[topic]?.includes(partition) === true;
  const joined = new Promise<void>((resolve, reject) => {
    const offJoin = consumer.on(consumer.events.GROUP_JOIN, () => {
      offJoin();
      offCrash();
      resolve();
    });
    const offCrash = consumer.on(consumer.events.CRASH, (event) => {
      // A retryable error while joining (the group coordinator still loading on a broker that has
      // just started): kafkajs restarts the consumer itself and the join goes on, still bounded by
      // joinTimeoutMs below. Failing here made a gateway starting beside a fresh Kafka exit.
      if (event.payload.restart) {
        logger?.info(
          { groupId, err: String(event.payload.error) },
          'consumer restarting while joining its group',
        );
        return;
      }
      offJoin();
      offCrash();
      reject(event.payload.error);
    });
  });

  await connectAndSubscribe(consumer, topics, Date.now() + ctx.joinTimeoutMs, (attempt, error, retryInMs) =>
    logger?.warn({ groupId, attempt, err: String(error), retryInMs }, 'consumer could not connect; retrying'),
  );
  const known = ctx.subscribed.get(groupId) ?? {
    topics: new Set<string>(),
    fromBeginning: subscribeOptions.fromBeginning === true,
  };
  for (const topic of topics) known.topics.add(topic);
  ctx.subscribed.set(groupId, known);
  /** True when the message lies below the group's pinned start: fast-forwarded (commit + seek). */
  const belowPin = async (topic: string, partition: number, offset: string): Promise<boolean> => {
    const pinKey = `${topic}/${partition}`;
    const pin = pins.get(pinKey);
    if (pin === undefined) return false;
    if (BigInt(offset) < pin) {
      // Below the pin: fast-forward, unless the group has really committed a lower offset.
      const committed = await committedOffset(await ctx.connections.getAdmin(), groupId, topic, partition);
      if (committed === null || committed >= pin) {
        if (committed === null) await consumer.commitOffsets([{ topic, partition, offset: pin.toString() }]);
        consumer.seek({ topic, partition, offset: (committed ?? pin).toString() });
        return true;
      }
    }
    pins.delete(pinKey);
    return false;
  };

  // eachBatch: woken whenever a message finishes, so a batch waiting for a free slot goes on.
  const waiters: (() => void)[] = [];
  const track = (work: Promise<void>): Promise<void> => {
    inFlight.add(work);
    return work.finally(() => {
      inFlight.delete(work);
      for (const wake of waiters.splice(0)) wake();
    });
  };

  const consume = async ({ topic, partition, message, heartbeat }: EachMessagePayload): Promise<void> => {
    // While stopping, later messages are left alone: nothing is committed past the last handled one.
    if (state !== 'running') return;
    if (await belowPin(topic, partition, message.offset)) return;
    await track(
      (async () => {
        const outcome = await processMessage(topic, partition, message, heartbeat);
        if (outcome === 'done') await commit(topic, partition, message.offset);
        // Not committed: whoever owns the partition next (maybe us after a rebalance) reads it again.
        else if (outcome === 'interrupted') consumer.seek({ topic, partition, offset: message.offset });
      })(),
    );
  };

  /** Waits (bounded by one heartbeat interval) for a message to finish; false: leave the batch. */
  const waitForSlot = async (heartbeat: () => Promise<void>): Promise<boolean> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      interrupted,
      new Promise<void>((resolve) => {
        waiters.push(resolve);
        timer = setTimeout(resolve, heartbeatEveryMs);
      }),
    ]);
    clearTimeout(timer);
    try {
      await heartbeat();
      return true;
    } catch {
      // Rebalancing: let kafkajs rejoin; the messages not started are fetched again.
      return false;
    }
  };

  /** One message in its partition's window; the commit moves up to the lowest unfinished one. */
  const runInWindow = async (
    window: BatchWindow,
    topic: string,
    partition: number,
    message: EachBatchPayload['batch']['messages'][number],
    heartbeat: () => Promise<void>,
  ): Promise<void> => {
    const offset = BigInt(message.offset);
    let outcome: Outcome;
    try {
      outcome = await processMessage(topic, partition, message, heartbeat);
    } catch (error) {
      // A dead letter that could not be published: the message stays unfinished here, and the
      // partition is read again from the lowest unfinished message (a fresh window).
      logger?.error({ topic, partition, offset: message.offset, err: String(error) }, 'delivery failed');
      outcome = 'interrupted';
      if (state === 'running' && !window.stale) {
        window.stale = true;
        windows.delete(`${topic}/${partition}`);
        consumer.seek({ topic, partition, offset: rereadFrom(window, offset).toString() });
      }
    } finally {
      stopRunning(window);
    }
    // Stop or crash: left uncommitted, so the next owner of the partition reads it again.
    if (outcome !== 'done') return;
    const mark = finishMessage(window, offset);
    if (mark === null) return;
    if (window.stale && !owns(topic, partition)) return;
    window.committed = mark;
    window.commits = window.commits
      .then(() => consumer.commitOffsets([{ topic, partition, offset: mark.toString() }]))
      .catch((error: unknown) => {
        // Left for the next commit of this partition, or redelivered (at least once).
        logger?.warn({ topic, partition, offset: mark.toString(), err: String(error) }, 'commit failed');
      });
    await window.commits;
  };

  /**
   * perPartitionConcurrency above 1: messages start as slots free up (batch-window.ts: the
   * member's `maxInFlight`, the partition's `perPartitionConcurrency`, at most MAX_UNCOMMITTED_SPAN
   * past its lowest unfinished message) and the batch returns once all have started, so kafkajs fetches again
   * while they run (with eachMessage it fetches only after every message of its last fetch is
   * done). The fetch position (resolveOffset) thus runs ahead of the commit.
   */
  const consumeBatch = async ({
    batch,
    resolveOffset,
    heartbeat,
    isRunning,
    isStale,
  }: EachBatchPayload): Promise<void> => {
    const { topic, partition } = batch;
    const key = `${topic}/${partition}`;
    for (const message of batch.messages) {
      if (state !== 'running' || !isRunning() || isStale()) return;
      if (await belowPin(topic, partition, message.offset)) return;
      const offset = BigInt(message.offset);
      let window = windows.get(key);
      if (!window) {
        window = openWindow(offset);
        windows.set(key, window);
      }
      if (startedAlready(window, offset)) {
        resolveOffset(message.offset);
        continue;
      }
      while (!hasSlotFor(window, offset, { inFlight: inFlight.size, maxInFlight, perPartition })) {
        if (!(await waitForSlot(heartbeat))) return;
        if (state !== 'running' || !isRunning() || isStale() || window.stale) return;
      }
      startMessage(window, offset);
      void track(runInWindow(window, topic, partition, message, heartbeat));
      resolveOffset(message.offset);
    }
  };

  // kafkajs restarts a crashed consumer only when the error is one of its retryable ones; an
  // error of ours (a DLQ publish that timed out, a failed offset lookup) would stop the member
  // for good. Nothing committed past the message, so re-reading it after the restart is safe.
  const retryableFor =
    <P>(consumeOne: (payload: P) => Promise<void>) =>
    async (payload: P): Promise<void> => {
      try {
        await consumeOne(payload);
      } catch (error) {
        throw asKafkaRetryable(error);
      }
    };
  const runConfig = {
    autoCommit: false,
    partitionsConsumedConcurrently: partitionsAtOnce,
    ...(perPartition === 1
      ? { eachMessage: retryableFor(consume) }
      : { eachBatchAutoResolve: false, eachBatch: retryableFor(consumeBatch) }),
  };
  await consumer.run(runConfig);
  try {
    await withTimeout(joined, ctx.joinTimeoutMs, `consumer group ${groupId} join`);
  } catch (error) {
    await consumer.disconnect().catch(() => undefined);
    throw error;
  }
  // Make the start position the group's own (committed) state at once, so a member that joins
  // later, or replaces this one after a crash, starts there too.
  const initial = Object.entries(assignment).flatMap(([topic, partitionsOfTopic]) =>
    partitionsOfTopic.flatMap((partition) => {
      const pin = pins.get(`${topic}/${partition}`);
      return pin === undefined ? [] : [{ topic, partition, offset: pin.toString() }];
    }),
  );
  if (initial.length > 0) {
    await consumer.commitOffsets(initial).catch((error: unknown) => {
      logger?.warn({ groupId, err: String(error) }, 'could not commit the start offsets of a new group');
    });
  }

  revival.watch(runConfig);

  let stopped: Promise<void> | null = null;
  const member: Member = {
    stop: () =>
      (stopped ??= (async () => {
        if (state === 'running') state = 'stopping';
        interrupt();
        await Promise.allSettled([...inFlight]);
        await consumer.disconnect();
        ctx.members.delete(member);
      })()),
  };
  ctx.members.add(member);

  return {
    stop: member.stop,
    async crash() {
      if (stopped) return stopped;
      state = 'crashed';
      return member.stop();
    },
  };
}
