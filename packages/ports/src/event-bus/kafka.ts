import {
  Kafka,
  Partitioners,
  logLevel,
  type Admin,
  type Consumer,
  type EachBatchPayload,
  type EachMessagePayload,
  type IHeaders,
  type Producer,
} from 'kafkajs';
import {
  RetriableError,
  dlqTopic,
  type BusMessage,
  type BusObserver,
  type ConsumerLag,
  type CrashableSubscription,
  type DeliveredMessage,
  type EventBus,
  type SubscribeOptions,
} from './port.ts';
import {
  MAX_UNCOMMITTED_SPAN,
  backoffDelay,
  concurrencyOf,
  deadLetterErrorMessage,
  type RetryBackoff,
} from './shared.ts';
import { kafkaSecurityConfig, type KafkaSecurity } from './kafka-security.ts';

/** Pino-shaped logger; kafkajs's own log lines are routed here (or dropped when absent). */
export interface BusLogger {
  debug?(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface KafkaConsumerTuning {
  /** A member that stops heartbeating (crashed) leaves the group after this. Default 10 000 ms. */
  sessionTimeout?: number;
  /** Default 1 000 ms. */
  heartbeatInterval?: number;
  /**
   * How long a rebalance waits for the known members to re-join. Default 10 000 ms. kafkajs has no
   * static membership, so a member restarted after a crash joins when this (or the dead member's
   * session) runs out: kafkajs's defaults (30 s / 60 s) made that about a minute.
   */
  rebalanceTimeout?: number;
  maxWaitTimeInMs?: number;
}

/** Short group timings: a crashed-and-restarted consumer joins in about 11 s instead of 30-63 s. */
export const DEFAULT_CONSUMER_TUNING = {
  sessionTimeout: 10_000,
  heartbeatInterval: 1_000,
  rebalanceTimeout: 10_000,
} as const;

export interface KafkaEventBusOptions {
  brokers: readonly string[];
  clientId: string;
  logger?: BusLogger;
  /** Partitions of topics created by `ensureTopics`. Default 3. */
  partitions?: number;
  /** Default: the broker's default.replication.factor. */
  replicationFactor?: number;
  consumer?: KafkaConsumerTuning;
  /** Redelivery backoff after a failed handler. Default 100 ms doubling up to 5 s. */
  retryBackoff?: RetryBackoff;
  /** Bound on `isHealthy()`. Default 2 000 ms. */
  healthTimeoutMs?: number;
  /** Bound on waiting for a new member's first group join in `subscribe`. Default 60 000 ms. */
  joinTimeoutMs?: number;
  /**
   * Bound on one `publish` (connecting the producer included). Default 30 000 ms: above kafkajs's
   * own retry budget for a broker that is restarting, below any caller's patience.
   */
  sendTimeoutMs?: number;
  /** Delay before a consumer that kafkajs gave up on is started again. Default 1 000 ms. */
  reviveDelayMs?: number;
  /**
   * How long creating topics (`ensureTopics`, and the check before a first `subscribe`) keeps
   * retrying a broker that refuses connections or is still electing leaders. Default 60 000 ms: a
   * broker started alongside the services (compose, a fresh cluster) takes seconds to get there,
   * and a service that exits instead is restarted by its supervisor only after a backoff.
   */
  topicSetupTimeoutMs?: number;
  observer?: BusObserver;
  /** TLS and SASL (kafka-security.ts); default plaintext. */
  security?: KafkaSecurity;
}

export interface KafkaEventBus extends EventBus {
  subscribe(options: SubscribeOptions): Promise<CrashableSubscription>;
  /** Lag of the groups subscribed through this bus: partition end minus committed offset, summed. */
  consumerLag(): Promise<ConsumerLag[]>;
}

interface Member {
  stop(): Promise<void>;
}

/** How one delivery ended: handled (or dead-lettered), given up between attempts, or a crash. */
type Outcome = 'done' | 'interrupted' | 'crashed';

/**
 * One partition's messages in flight with `perPartitionConcurrency` above 1, for one generation of
 * the group (a rebalance fetches again from the committed offsets, into fresh windows).
 */
interface Window {
  /** Started and not handled (running, backing off, or given up on at stop), ascending. */
  unfinished: bigint[];
  running: number;
  /** The offset after the last message started. */
  next: bigint;
  /** The highest offset committed from this window. */
  committed: bigint;
  /** Commits run one after another, so a lower one never lands after a higher one. */
  commits: Promise<void>;
  /** Replaced (rebalance, or a delivery that failed outside the handler): commits only if still ours. */
  stale: boolean;
}

/**
 * EventBus on Kafka. One idempotent producer (acks=all), one admin client, and one kafkajs consumer
 * per subscription (a group member). Offsets are committed by hand, only after the handler resolved.
 * By default one message of a partition at a time (eachMessage): a failed message is retried in
 * place (the partition waits) and, on rebalance or stop, the consumer seeks back to it so nothing
 * after it is committed first. With `perPartitionConcurrency` above 1 (eachBatch), see `Window`.
 */
export function createKafkaEventBus(options: KafkaEventBusOptions): KafkaEventBus {
  const logger = options.logger;
  const partitions = options.partitions ?? 3;
  const retryBackoff: Required<RetryBackoff> = {
    initialMs: options.retryBackoff?.initialMs ?? 100,
    maxMs: options.retryBackoff?.maxMs ?? 5_000,
  };
  const healthTimeoutMs = options.healthTimeoutMs ?? 2_000;
  const joinTimeoutMs = options.joinTimeoutMs ?? 60_000;
  const sendTimeoutMs = options.sendTimeoutMs ?? 30_000;
  const reviveDelayMs = options.reviveDelayMs ?? 1_000;
  const topicSetupTimeoutMs = options.topicSetupTimeoutMs ?? 60_000;

  const kafka = new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    ...kafkaSecurityConfig(options.security),
    connectionTimeout: 3_000,
    // Each request gives up after 10 s (kafkajs: 30 s) and retries back off at most 2 s each
    // (kafkajs: 30 s), so a broker outage is noticed, and recovered from, within seconds.
    requestTimeout: 10_000,
    retry: { initialRetryTime: 100, maxRetryTime: 2_000, retries: 5 },
    // kafkajs logs to the console by default: route it to our logger, or nowhere.
    logLevel: logger ? logLevel.INFO : logLevel.NOTHING,
    logCreator:
      () =>
      ({ level, log }) => {
        if (!logger) return;
        const { message, ...fields } = log;
        const entry = { ...fields, component: 'kafkajs' };
        // A rebalance is routine (a member joined, left or was restarted), yet kafkajs reports each
        // refused heartbeat/commit of one at error level: hundreds of lines per deploy.
        if (level <= logLevel.WARN && isRoutineRebalance(message, fields)) logger.info(entry, message);
        else if (level === logLevel.ERROR) logger.error(entry, message);
        else if (level === logLevel.WARN) logger.warn(entry, message);
        else logger.debug?.(entry, message);
      },
  });

  let producerPromise: Promise<Producer> | null = null;
  let adminPromise: Promise<Admin> | null = null;
  const knownTopics = new Set<string>();
  const members = new Set<Member>();
  /** Consumer groups subscribed through this bus (whose lag we report): their topics and start. */
  const subscribed = new Map<string, { topics: Set<string>; fromBeginning: boolean }>();
  let closed = false;
  const observer = options.observer;

  const connectOnce = <T extends { connect(): Promise<void> }>(make: () => T, reset: () => void) =>
    (async () => {
      const client = make();
      try {
        await client.connect();
        return client;
      } catch (error) {
        reset();
        throw error;
      }
    })();

  const getProducer = (): Promise<Producer> =>
    (producerPromise ??= connectOnce(
      () =>
        kafka.producer({
          idempotent: true,
          // One request in flight keeps per-key order even across retries.
          maxInFlightRequests: 1,
          allowAutoTopicCreation: false,
          createPartitioner: Partitioners.DefaultPartitioner,
        }),
      () => (producerPromise = null),
    ));

  const getAdmin = (): Promise<Admin> =>
    (adminPromise ??= connectOnce(
      () => kafka.admin(),
      () => (adminPromise = null),
    ));

  const dropAdmin = (failed: Promise<Admin>): void => {
    if (adminPromise !== failed) return;
    adminPromise = null;
    void failed
      .then((admin) => withTimeout(admin.disconnect(), 5_000, 'kafka admin disconnect'))
      .catch(() => undefined);
  };

  const createMissing = async (wanted: readonly string[]): Promise<void> => {
    const current = getAdmin();
    try {
      const admin = await current;
      const existing = new Set(await admin.listTopics());
      const missing = wanted.filter((t) => !existing.has(t));
      if (missing.length === 0) return;
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((topic) => ({
          topic,
          numPartitions: partitions,
          ...(options.replicationFactor === undefined
            ? {}
            : { replicationFactor: options.replicationFactor }),
        })),
      });
    } catch (error) {
      // Another process may have created them between listTopics and createTopics.
      if (String((error as Error).message).includes('already exists')) return;
      dropAdmin(current);
      throw error;
    }
  };

  /**
   * Creates exactly these topics if missing (no `.dlq` twins), retrying within
   * `topicSetupTimeoutMs`. A broker that just started refuses connections, or answers metadata
   * requests mid leader election, for a few seconds; kafkajs's own retries give up sooner (and its
   * `listTopics` then fails with a TypeError on the missing metadata), which made a gateway pod
   * exit at start in a fresh cluster.
   */
  const ensureExact = async (names: readonly string[]): Promise<void> => {
    const unknown = [...new Set(names)].filter((t) => !knownTopics.has(t));
    if (unknown.length === 0) return;
    const deadline = Date.now() + topicSetupTimeoutMs;
    for (let attempt = 1; ; attempt++) {
      try {
        await createMissing(unknown);
        break;
      } catch (error) {
        const delay = backoffDelay({ initialMs: 250, maxMs: 2_000 }, attempt);
        if (closed || Date.now() + delay >= deadline) throw error;
        logger?.warn(
          { err: error, topics: unknown, attempt, retryInMs: delay },
          'kafka topic setup failed; retrying (a broker that just started may not be ready yet)',
        );
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
    for (const t of unknown) knownTopics.add(t);
  };

  /**
   * A producer whose send failed or hung is dropped and the next send connects a fresh one: a
   * kafkajs producer can stay wedged after a broker restart (a request that never completes holds
   * its single in-flight slot; an idempotent producer whose sequence the broker no longer accepts
   * fails every later send), which stopped the outbox relay for good in one CI run. A fresh
   * producer gets a new producer id, so the broker's duplicate detection does not span the switch:
   * every consumer here dedupes on the event id (billing) or ignores repeats (fan-out results).
   */
  const dropProducer = (failed: Promise<Producer>): void => {
    if (producerPromise !== failed) return;
    producerPromise = null;
    void failed
      .then((producer) => withTimeout(producer.disconnect(), 5_000, 'kafka producer disconnect'))
      .catch(() => undefined);
  };

  const send = async (topic: string, messages: readonly BusMessage[]): Promise<void> => {
    await withTimeout(ensureExact([topic]), sendTimeoutMs, `kafka topic check for ${topic}`);
    const current = getProducer();
    try {
      await withTimeout(
        current.then((producer) =>
          producer.send({
            topic,
            acks: -1,
            messages: messages.map((m) => ({
              key: m.key,
              value: Buffer.from(m.value.buffer, m.value.byteOffset, m.value.byteLength),
              headers: { ...m.headers },
            })),
          }),
        ),
        sendTimeoutMs,
        `kafka send to ${topic}`,
      );
    } catch (error) {
      dropProducer(current);
      // Checked again next time: a broker that came back without its data lost the topic too.
      knownTopics.delete(topic);
      throw error;
    }
    observer?.published?.(topic, messages.length);
  };

  /**
   * A group without a committed offset for a partition must start where the partition ended when
   * `subscribe` was called. kafkajs's own "latest" is resolved only at its first fetch, so a message
   * published right after `subscribe` resolved could be skipped; instead the consumer starts from
   * the beginning and `eachMessage` fast-forwards (commit + seek) to these pinned offsets.
   */
  const pinStartOffsets = async (
    groupId: string,
    topics: readonly string[],
  ): Promise<Map<string, bigint>> => {
    const admin = await getAdmin();
    const pins = new Map<string, bigint>();
    for (const topic of topics) {
      const [committed] = await retrying(() => admin.fetchOffsets({ groupId, topics: [topic] }));
      const uncommitted = new Set(
        (committed?.partitions ?? []).filter((p) => p.offset === '-1').map((p) => p.partition),
      );
      if (uncommitted.size === 0) continue;
      const ends = await retrying(() => admin.fetchTopicOffsets(topic));
      for (const end of ends) {
        if (uncommitted.has(end.partition)) pins.set(`${topic}/${end.partition}`, BigInt(end.high));
      }
    }
    return pins;
  };

  /** The group's committed offset for one partition, or null when it has none. */
  const committedOffset = async (
    groupId: string,
    topic: string,
    partition: number,
  ): Promise<bigint | null> => {
    const admin = await getAdmin();
    const [committed] = await retrying(() => admin.fetchOffsets({ groupId, topics: [topic] }));
    const offset = committed?.partitions.find((p) => p.partition === partition)?.offset;
    return offset === undefined || offset === '-1' ? null : BigInt(offset);
  };

  const subscribe = async (subscribeOptions: SubscribeOptions): Promise<CrashableSubscription> => {
    if (closed) throw new Error('event bus is closed');
    const { groupId, topics, handler } = subscribeOptions;
    const maxAttempts = subscribeOptions.maxAttempts ?? 3;
    const concurrency = concurrencyOf(subscribeOptions);
    const perPartition = concurrency.perPartition;
    // The partitions kafkajs hands us at once; with eachBatch also the cap on messages in flight.
    const partitionsAtOnce = concurrency.maxInFlight ?? partitions;
    const maxInFlight = concurrency.maxInFlight ?? perPartition * partitions;
    await ensureExact(topics);
    const pins = subscribeOptions.fromBeginning
      ? new Map<string, bigint>()
      : await pinStartOffsets(groupId, topics);

    const tuning = { ...DEFAULT_CONSUMER_TUNING, ...options.consumer };
    const consumer: Consumer = kafka.consumer({
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
    /** Delay before the next revive (below): doubles per revive, back to the start on progress. */
    let reviveInMs = reviveDelayMs;
    // A function, so checks after an await are not narrowed away by the compiler.
    const crashed = (): boolean => state === 'crashed';
    let interrupt!: () => void;
    const interrupted = new Promise<void>((resolve) => (interrupt = resolve));
    const inFlight = new Set<Promise<void>>();

    const waitBackoff = async (
      ms: number,
      heartbeat: () => Promise<void>,
    ): Promise<'done' | 'interrupted'> => {
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

    const runHandler = async (
      message: DeliveredMessage,
      heartbeat: () => Promise<void>,
    ): Promise<unknown> => {
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

    /** Runs the handler (retries and dead letter included); the caller commits. */
    const processMessage = async (
      topic: string,
      partition: number,
      raw: { offset: string; key: Buffer | null; value: Buffer | null; headers?: IHeaders },
      heartbeat: () => Promise<void>,
    ): Promise<Outcome> => {
      const headers = toStringHeaders(raw.headers);
      const key = raw.key === null ? null : raw.key.toString('utf8');
      const value = raw.value ?? Buffer.alloc(0);
      let failures = 0;
      for (let attempt = 1; ; attempt++) {
        const delivered: DeliveredMessage = {
          topic,
          partition,
          offset: raw.offset,
          key,
          value: new Uint8Array(value),
          headers: { ...headers },
          attempt,
        };
        const error = await runHandler(delivered, heartbeat);
        if (crashed()) return 'crashed';
        observer?.handled?.(
          topic,
          groupId,
          error === null ? 'ok' : error instanceof RetriableError ? 'retry' : 'failed',
        );
        if (error === null) {
          reviveInMs = reviveDelayMs;
          return 'done';
        }
        if (!(error instanceof RetriableError)) {
          failures++;
          if (failures >= maxAttempts) {
            observer?.deadLettered?.(topic, groupId);
            await send(dlqTopic(topic), [
              {
                key,
                value,
                headers: {
                  ...headers,
                  'x-error-message': deadLetterErrorMessage(error),
                  'x-original-topic': topic,
                  'x-original-partition': String(partition),
                  'x-original-offset': raw.offset,
                },
              },
            ]);
            return 'done';
          }
          logger?.warn(
            { topic, partition, offset: raw.offset, attempt, err: String(error) },
            'handler failed',
          );
        }
        if ((await waitBackoff(backoffDelay(retryBackoff, attempt), heartbeat)) === 'interrupted') {
          return crashed() ? 'crashed' : 'interrupted';
        }
      }
    };

    // The member's partitions and (eachBatch) their windows, both of the current generation: a
    // rebalance starts fresh windows from the committed offsets.
    let assignment: Record<string, number[]> = {};
    let windows = new Map<string, Window>();
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      assignment = event.payload.memberAssignment;
      for (const window of windows.values()) window.stale = true;
      windows = new Map();
    });
    const owns = (topic: string, partition: number): boolean =>
      assignment[topic]?.includes(partition) === true;
    const joined = new Promise<void>((resolve, reject) => {
      const offJoin = consumer.on(consumer.events.GROUP_JOIN, () => {
        offJoin();
        offCrash();
        resolve();
      });
      const offCrash = consumer.on(consumer.events.CRASH, (event) => {
        offJoin();
        offCrash();
        reject(event.payload.error);
      });
    });

    await consumer.connect();
    await consumer.subscribe({ topics: [...topics], fromBeginning: true });
    const known = subscribed.get(groupId) ?? {
      topics: new Set<string>(),
      fromBeginning: subscribeOptions.fromBeginning === true,
    };
    for (const topic of topics) known.topics.add(topic);
    subscribed.set(groupId, known);
    /** True when the message lies below the group's pinned start: fast-forwarded (commit + seek). */
    const belowPin = async (topic: string, partition: number, offset: string): Promise<boolean> => {
      const pinKey = `${topic}/${partition}`;
      const pin = pins.get(pinKey);
      if (pin === undefined) return false;
      if (BigInt(offset) < pin) {
        // Below the pin: fast-forward, unless the group has really committed a lower offset.
        const committed = await committedOffset(groupId, topic, partition);
        if (committed === null || committed >= pin) {
          if (committed === null)
            await consumer.commitOffsets([{ topic, partition, offset: pin.toString() }]);
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
      window: Window,
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
          consumer.seek({ topic, partition, offset: (window.unfinished[0] ?? offset).toString() });
        }
      } finally {
        window.running--;
      }
      // Stop or crash: left uncommitted, so the next owner of the partition reads it again.
      if (outcome !== 'done') return;
      window.unfinished.splice(window.unfinished.indexOf(offset), 1);
      const mark = window.unfinished[0] ?? window.next;
      if (mark <= window.committed) return;
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
     * perPartitionConcurrency above 1: messages start as slots free up (the member's `maxInFlight`,
     * the partition's `perPartitionConcurrency`, at most MAX_UNCOMMITTED_SPAN past its lowest
     * unfinished message) and the batch returns once all have started, so kafkajs fetches again
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
          window = {
            unfinished: [],
            running: 0,
            next: offset,
            committed: -1n,
            commits: Promise.resolve(),
            stale: false,
          };
          windows.set(key, window);
        }
        // Fetched again in this generation (kafkajs reset its position): started already.
        if (offset < window.next) {
          resolveOffset(message.offset);
          continue;
        }
        while (
          inFlight.size >= maxInFlight ||
          window.running >= perPartition ||
          offset - (window.unfinished[0] ?? offset) >= BigInt(MAX_UNCOMMITTED_SPAN)
        ) {
          if (!(await waitForSlot(heartbeat))) return;
          if (state !== 'running' || !isRunning() || isStale() || window.stale) return;
        }
        window.unfinished.push(offset);
        window.running++;
        window.next = offset + 1n;
        void track(runInWindow(window, topic, partition, message, heartbeat));
        resolveOffset(message.offset);
      }
    };

    // kafkajs restarts a crashed consumer only when the error is one of its retriable ones; an
    // error of ours (a DLQ publish that timed out, a failed offset lookup) would stop the member
    // for good. Nothing committed past the message, so re-reading it after the restart is safe.
    const retriableFor =
      <P>(consumeOne: (payload: P) => Promise<void>) =>
      async (payload: P): Promise<void> => {
        try {
          await consumeOne(payload);
        } catch (error) {
          throw asKafkaRetriable(error);
        }
      };
    const runConfig = {
      autoCommit: false,
      partitionsConsumedConcurrently: partitionsAtOnce,
      ...(perPartition === 1
        ? { eachMessage: retriableFor(consume) }
        : { eachBatchAutoResolve: false, eachBatch: retriableFor(consumeBatch) }),
    };
    await consumer.run(runConfig);
    try {
      await withTimeout(joined, joinTimeoutMs, `consumer group ${groupId} join`);
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

    // The safety net under the above: whatever kafkajs gave up on (a crash it does not restart),
    // the member is started again, with a growing delay, until it runs or is stopped. A member that
    // silently stopped consuming left billing without usage events in one CI run.
    let reviving = false;
    const revive = (error: unknown): void => {
      if (state !== 'running') return;
      reviving = true;
      const delayMs = reviveInMs;
      // A member that keeps crashing (a message it can neither handle nor dead-letter) is retried
      // less and less often; one handled message resets the delay.
      reviveInMs = Math.min(30_000, reviveInMs * 2);
      logger?.error(
        { groupId, err: String(error), retryInMs: delayMs },
        'consumer stopped; starting it again',
      );
      observer?.consumerRevived?.(groupId);
      const timer = setTimeout(() => {
        void (async () => {
          if (state !== 'running') return void (reviving = false);
          try {
            await consumer.connect();
            // run() reports a failed start through CRASH (which brings us back here), not by throwing.
            await consumer.run(runConfig);
            reviving = false;
          } catch (err) {
            revive(err);
          }
        })();
      }, delayMs);
      timer.unref?.();
    };
    consumer.on(consumer.events.CRASH, (event) => {
      if (!event.payload.restart && !reviving) revive(event.payload.error);
    });

    let stopped: Promise<void> | null = null;
    const member: Member = {
      stop: () =>
        (stopped ??= (async () => {
          if (state === 'running') state = 'stopping';
          interrupt();
          await Promise.allSettled([...inFlight]);
          await consumer.disconnect();
          members.delete(member);
        })()),
    };
    members.add(member);

    return {
      stop: member.stop,
      async crash() {
        if (stopped) return stopped;
        state = 'crashed';
        return member.stop();
      },
    };
  };

  const consumerLag = async (): Promise<ConsumerLag[]> => {
    if (closed || subscribed.size === 0) return [];
    const admin = await getAdmin();
    const lags: ConsumerLag[] = [];
    for (const [groupId, { topics: groupTopics, fromBeginning }] of subscribed) {
      for (const topic of groupTopics) {
        const [ends, [committed]] = await Promise.all([
          admin.fetchTopicOffsets(topic),
          admin.fetchOffsets({ groupId, topics: [topic] }),
        ]);
        let lag = 0;
        for (const end of ends) {
          const offset = committed?.partitions.find((p) => p.partition === end.partition)?.offset;
          // No commit yet: the group starts at the log's start (fromBeginning) or at the end it
          // pinned when it subscribed (pinStartOffsets), which is then nothing behind.
          const uncommitted = offset === undefined || offset === '-1';
          const from = uncommitted ? BigInt(fromBeginning ? end.low : end.high) : BigInt(offset);
          const behind = BigInt(end.high) - from;
          if (behind > 0n) lag += Number(behind);
        }
        lags.push({ groupId, topic, lag });
      }
    }
    return lags;
  };
  observer?.lagSource?.(consumerLag);

  return {
    consumerLag,

    async publish(topic, messages) {
      if (closed) throw new Error('event bus is closed');
      if (messages.length === 0) return;
      await send(topic, messages);
    },

    subscribe,

    async ensureTopics(topics) {
      await ensureExact(topics.flatMap((t) => [t, dlqTopic(t)]));
    },

    async isHealthy() {
      if (closed) return false;
      try {
        const admin = await withTimeout(getAdmin(), healthTimeoutMs, 'kafka admin connect');
        await withTimeout(admin.describeCluster(), healthTimeoutMs, 'kafka describeCluster');
        return true;
      } catch {
        return false;
      }
    },

    async hasActiveMembers(groupId) {
      if (closed) return false;
      try {
        const admin = await withTimeout(getAdmin(), healthTimeoutMs, 'kafka admin connect');
        const { groups } = await withTimeout(
          admin.describeGroups([groupId]),
          healthTimeoutMs,
          'kafka describeGroups',
        );
        const group = groups[0];
        return group?.state === 'Stable' && group.members.length > 0;
      } catch {
        return false;
      }
    },

    async close() {
      if (closed) return;
      closed = true;
      await Promise.allSettled([...members].map((m) => m.stop()));
      const clients = await Promise.allSettled([producerPromise, adminPromise]);
      await Promise.allSettled(
        clients.map((c) => (c.status === 'fulfilled' && c.value ? c.value.disconnect() : undefined)),
      );
    },
  };
}

// kafkajs's messages for the error codes a rebalance produces (REBALANCE_IN_PROGRESS,
// ILLEGAL_GENERATION, NOT_COORDINATOR, UNKNOWN_MEMBER_ID) and for its own re-join steps.
const ROUTINE_REBALANCE =
  /group is rebalancing|rebalance in progress|re-joining|generation id is not valid|not the correct coordinator|not aware of this member/i;

/** True for log entries that only narrate a consumer-group rebalance. */
export function isRoutineRebalance(message: string, fields: Record<string, unknown>): boolean {
  return ROUTINE_REBALANCE.test(message) || ROUTINE_REBALANCE.test(String(fields.error ?? ''));
}

const RETRY_ATTEMPTS = 8;

/** Retries kafkajs errors the protocol marks retriable (coordinator loading, leader moved, ...). */
async function retrying<T>(operation: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      const retriable = (error as { retriable?: boolean }).retriable === true;
      if (!retriable || attempt >= RETRY_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, 50 * 2 ** attempt)));
    }
  }
}

/**
 * Errors of ours marked the way kafkajs judges retriability (`retriable: true` on the innermost
 * error, so no `cause`). Not a `KafkaJSError` instance: kafkajs is CommonJS and its error classes
 * are not named exports Node's ESM loader can see.
 */
export function asKafkaRetriable(error: unknown): Error {
  if (error instanceof Error && error.name.startsWith('KafkaJS')) return error;
  const message = error instanceof Error ? error.message : String(error);
  return Object.assign(new Error(`while handling a message: ${message}`), {
    name: 'SubxHandlingError',
    retriable: true,
  });
}

function toStringHeaders(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, raw] of Object.entries(headers ?? {})) {
    const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
    if (value === undefined) continue;
    out[name] = typeof value === 'string' ? value : value.toString('utf8');
  }
  return out;
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
