import { CRASHED, deliver } from './delivery.ts';
import {
  dlqTopic,
  type BusMessage,
  type BusObserver,
  type ConsumerLag,
  type CrashableSubscription,
  type EventBus,
  type SubscribeOptions,
} from './port.ts';
import { MAX_UNCOMMITTED_SPAN, concurrencyOf, stableHash, type RetryBackoff } from './shared.ts';

export interface InProcessEventBusOptions {
  /** Partitions per topic. Default 3 (same as the Kafka adapter). */
  partitions?: number;
  /** Redelivery backoff after a failed handler. Default 100 ms doubling up to 5 s. */
  retryBackoff?: RetryBackoff;
  observer?: BusObserver;
}

export interface InProcessEventBus extends EventBus {
  subscribe(options: SubscribeOptions): Promise<CrashableSubscription>;
}

interface StoredMessage {
  key: string | null;
  value: Uint8Array;
  headers: Record<string, string>;
}

interface Topic {
  partitions: StoredMessage[][];
  nextRoundRobin: number;
}

/** Per (group, topic, partition): the committed offset and who is working on which message. */
interface PartitionState {
  /** The lowest unfinished offset: everything below it is handled. */
  committed: number;
  /** Offsets above `committed` already handled (only with `perPartitionConcurrency` above 1). */
  done: Set<number>;
  /** Offsets being handled (or backing off), and by whom. */
  busy: Map<number, Member>;
}

interface Member {
  id: number;
  group: Group;
  options: SubscribeOptions;
  perPartition: number;
  maxInFlight: number;
  alive: boolean;
  crashed: boolean;
  /** Keys `${topic}/${partition}` this member owns after the last rebalance. */
  assigned: Set<string>;
  /** Where the next look for work starts among `assigned`: the one after the last served. */
  nextPartition: number;
  inFlight: Set<Promise<void>>;
  timers: Set<{ timer: ReturnType<typeof setTimeout>; resolve: () => void }>;
}

interface Group {
  id: string;
  members: Member[];
  partitions: Map<string, PartitionState>;
}

const partitionKey = (topic: string, partition: number): string => `${topic}/${partition}`;

/**
 * Kafka-shaped bus inside one process: topics are partitioned append-only logs, consumer groups
 * keep committed offsets and split partitions among their live members. Work is driven by events
 * (publish, commit, join/leave, backoff timers), never by polling.
 */
export function createInProcessEventBus(options: InProcessEventBusOptions = {}): InProcessEventBus {
  const partitionCount = options.partitions ?? 3;
  const retryBackoff: Required<RetryBackoff> = {
    initialMs: options.retryBackoff?.initialMs ?? 100,
    maxMs: options.retryBackoff?.maxMs ?? 5_000,
  };
  const topics = new Map<string, Topic>();
  const groups = new Map<string, Group>();
  let nextMemberId = 1;
  let closed = false;

  const topicOf = (name: string): Topic => {
    let topic = topics.get(name);
    if (!topic) {
      topic = { partitions: Array.from({ length: partitionCount }, () => []), nextRoundRobin: 0 };
      topics.set(name, topic);
    }
    return topic;
  };

  const assertOpen = (): void => {
    if (closed) throw new Error('event bus is closed');
  };

  const append = (topicName: string, message: BusMessage): void => {
    const topic = topicOf(topicName);
    const partition =
      message.key === null
        ? topic.nextRoundRobin++ % partitionCount
        : stableHash(message.key) % partitionCount;
    // Copies, so a publisher that reuses its buffers cannot change what consumers see.
    topic.partitions[partition]!.push({
      key: message.key,
      value: new Uint8Array(message.value),
      headers: { ...message.headers },
    });
  };

  const rebalance = (group: Group): void => {
    for (const member of group.members) member.assigned.clear();
    const topicNames = new Set(group.members.flatMap((m) => m.options.topics));
    for (const topicName of topicNames) {
      const members = group.members.filter((m) => m.options.topics.includes(topicName));
      for (let p = 0; p < partitionCount; p++) {
        members[p % members.length]?.assigned.add(partitionKey(topicName, p));
      }
    }
  };

  /** The next offset of a partition nobody handles or has handled yet, if it may start now. */
  const nextOffset = (state: PartitionState, length: number, perPartition: number): number | null => {
    if (state.busy.size >= perPartition) return null;
    const end = Math.min(length, state.committed + MAX_UNCOMMITTED_SPAN);
    for (let offset = state.committed; offset < end; offset++) {
      if (!state.busy.has(offset) && !state.done.has(offset)) return offset;
    }
    return null;
  };

  /**
   * Starts what the members have room for, one message per partition per pass, each pass starting
   * after the partition served last: a member whose first partitions always hold messages still
   * serves its last ones (as a Kafka consumer fetches from all of its partitions).
   */
  const pump = (group: Group): void => {
    if (closed) return;
    for (const member of group.members) {
      const keys = [...member.assigned];
      for (let started = true; started && member.inFlight.size < member.maxInFlight;) {
        started = false;
        const first = member.nextPartition;
        for (let i = 0; i < keys.length && member.inFlight.size < member.maxInFlight; i++) {
          const at = (first + i) % keys.length;
          const key = keys[at]!;
          const state = group.partitions.get(key);
          if (!state) continue;
          const [topicName, p] = splitKey(key);
          const log = topicOf(topicName).partitions[p]!;
          const offset = nextOffset(state, log.length, member.perPartition);
          if (offset === null) continue;
          started = true;
          member.nextPartition = (at + 1) % keys.length;
          state.busy.set(offset, member);
          const work = deliverOne(member, state, topicName, p, offset, log[offset]!);
          member.inFlight.add(work);
          void work.finally(() => {
            member.inFlight.delete(work);
            // A crashed member's messages were already released when it crashed; a message left
            // between attempts (stop, rebalance) goes back to whoever owns the partition now.
            if (state.busy.get(offset) === member) state.busy.delete(offset);
            pump(group);
          });
        }
      }
    }
  };

  /** Marks one message handled and moves the commit over every handled message in a row. */
  const finish = (state: PartitionState, offset: number): void => {
    state.done.add(offset);
    while (state.done.delete(state.committed)) state.committed++;
  };

  const sleepFor = (member: Member, ms: number): Promise<void> =>
    new Promise((resolve) => {
      const entry = {
        timer: setTimeout(() => {
          member.timers.delete(entry);
          resolve();
        }, ms),
        resolve,
      };
      member.timers.add(entry);
    });

  const deliverOne = async (
    member: Member,
    state: PartitionState,
    topic: string,
    partition: number,
    offset: number,
    stored: StoredMessage,
  ): Promise<void> => {
    const outcome = await deliver({
      topic,
      partition,
      offset: String(offset),
      groupId: member.group.id,
      key: stored.key,
      value: stored.value,
      headers: stored.headers,
      maxAttempts: member.options.maxAttempts ?? 3,
      retryBackoff,
      observer: options.observer,
      // Leaving (stop/rebalance) between attempts hands the message to whoever owns it next.
      stillOwned: () => member.alive && member.assigned.has(partitionKey(topic, partition)),
      runHandler: async (message) => {
        let error: unknown = null;
        try {
          await member.options.handler(message);
        } catch (e) {
          error = e ?? new Error('handler threw a nullish value');
        }
        return member.crashed ? CRASHED : error;
      },
      publishDeadLetter: (deadLetter) => {
        options.observer?.published?.(dlqTopic(topic), 1);
        append(dlqTopic(topic), deadLetter);
      },
      waitBackoff: async (ms) => {
        await sleepFor(member, ms);
        return 'done';
      },
    });
    if (outcome === 'handled' || outcome === 'dead-lettered') finish(state, offset);
    if (outcome === 'dead-lettered') {
      const dlqGroups = [...groups.values()].filter((g) =>
        g.members.some((m) => m.options.topics.includes(dlqTopic(topic))),
      );
      for (const g of dlqGroups) queueMicrotask(() => pump(g));
    }
  };

  const leave = (member: Member): void => {
    const group = member.group;
    member.alive = false;
    group.members = group.members.filter((m) => m !== member);
    rebalance(group);
  };

  options.observer?.lagSource?.(async () => {
    const lag = new Map<string, ConsumerLag>();
    for (const group of groups.values()) {
      for (const [key, state] of group.partitions) {
        const cut = key.lastIndexOf('/');
        const topic = key.slice(0, cut);
        const log = topics.get(topic)?.partitions[Number(key.slice(cut + 1))];
        const entry = lag.get(`${group.id}\0${topic}`) ?? { groupId: group.id, topic, lag: 0 };
        entry.lag += Math.max(0, (log?.length ?? 0) - state.committed);
        lag.set(`${group.id}\0${topic}`, entry);
      }
    }
    return [...lag.values()];
  });

  return {
    async publish(topic, messages) {
      assertOpen();
      for (const message of messages) append(topic, message);
      if (messages.length > 0) options.observer?.published?.(topic, messages.length);
      for (const group of groups.values()) {
        if (group.members.some((m) => m.options.topics.includes(topic))) queueMicrotask(() => pump(group));
      }
    },

    async subscribe(subscribeOptions) {
      assertOpen();
      const { perPartition, maxInFlight } = concurrencyOf(subscribeOptions);
      let group = groups.get(subscribeOptions.groupId);
      if (!group) {
        group = { id: subscribeOptions.groupId, members: [], partitions: new Map() };
        groups.set(group.id, group);
      }
      for (const topicName of subscribeOptions.topics) {
        const topic = topicOf(topicName);
        topic.partitions.forEach((log, p) => {
          const key = partitionKey(topicName, p);
          if (!group.partitions.has(key)) {
            group.partitions.set(key, {
              committed: subscribeOptions.fromBeginning ? 0 : log.length,
              done: new Set(),
              busy: new Map(),
            });
          }
        });
      }
      const member: Member = {
        id: nextMemberId++,
        group,
        options: subscribeOptions,
        perPartition,
        maxInFlight: maxInFlight ?? Number.POSITIVE_INFINITY,
        alive: true,
        crashed: false,
        assigned: new Set(),
        nextPartition: 0,
        inFlight: new Set(),
        timers: new Set(),
      };
      group.members.push(member);
      rebalance(group);
      queueMicrotask(() => pump(group));

      const cancelTimers = (): void => {
        for (const entry of member.timers) {
          clearTimeout(entry.timer);
          entry.resolve();
        }
        member.timers.clear();
      };

      return {
        async stop() {
          if (!member.alive) {
            await Promise.allSettled([...member.inFlight]);
            return;
          }
          leave(member);
          // A message waiting out its backoff is not in a handler: give it up now, uncommitted.
          cancelTimers();
          await Promise.allSettled([...member.inFlight]);
          pump(group);
        },
        async crash() {
          if (!member.alive) return;
          member.crashed = true;
          leave(member);
          cancelTimers();
          // The dead member's work is abandoned: release its messages at once, uncommitted.
          for (const state of group.partitions.values()) {
            for (const [offset, owner] of state.busy) if (owner === member) state.busy.delete(offset);
          }
          pump(group);
        },
      };
    },

    async ensureTopics(names) {
      assertOpen();
      for (const name of names) {
        topicOf(name);
        topicOf(dlqTopic(name));
      }
    },

    async isHealthy() {
      return !closed;
    },

    async hasActiveMembers(groupId) {
      return !closed && (groups.get(groupId)?.members.length ?? 0) > 0;
    },

    async close() {
      if (closed) return;
      const members = [...groups.values()].flatMap((g) => g.members);
      for (const member of members) {
        leave(member);
        for (const entry of member.timers) {
          clearTimeout(entry.timer);
          entry.resolve();
        }
      }
      await Promise.allSettled(members.flatMap((m) => [...m.inFlight]));
      closed = true;
    },
  };
}

function splitKey(key: string): [string, number] {
  const slash = key.lastIndexOf('/');
  return [key.slice(0, slash), Number(key.slice(slash + 1))];
}
