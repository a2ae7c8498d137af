/**
 * Event bus port: topics of keyed binary messages, consumer groups, at-least-once delivery.
 * Adapters: Kafka (kafka.ts, the only importer of kafkajs) and in-process (in-process.ts).
 *
 * Semantics both adapters guarantee (and contract.ts checks):
 * - Messages with the same key keep their order (same partition).
 * - Within one consumer group each message is handled by one member at a time; after the
 *   handler resolves, the offset is committed and the group never sees that message again.
 *   Different groups each receive every message.
 * - A handler that throws `RetryableError` is retried (redelivered) without limit, with backoff.
 * - A handler that throws anything else is retried up to `maxAttempts`; then the message goes to
 *   `<topic>.dlq` with headers `x-error-message`, `x-original-topic`, `x-original-partition`,
 *   `x-original-offset`, and is committed (a poison message never blocks its partition).
 * - A member that stops (or crashes) before committing leaves the message for redelivery.
 * - With `perPartitionConcurrency` above 1 (opt-in per subscription), a member handles several
 *   messages of one partition at once, so same-key order of handling is no longer kept for that
 *   subscription; the commit still moves in offset order, only up to the lowest unfinished message
 *   (a slow or retried message holds it back, never a later success moves it past), and a stop,
 *   crash or rebalance redelivers from there (messages already handled after it may come again).
 */
export interface BusMessage {
  key: string | null;
  value: Uint8Array;
  headers?: Record<string, string>;
}

export interface DeliveredMessage {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  value: Uint8Array;
  headers: Record<string, string>;
  /** 1 on first delivery to this member; grows with retries. */
  attempt: number;
}

export type MessageHandler = (message: DeliveredMessage) => Promise<void>;

export interface SubscribeOptions {
  groupId: string;
  topics: readonly string[];
  handler: MessageHandler;
  /** Where a brand-new group starts. Default false (only messages published after joining). */
  fromBeginning?: boolean;
  /** Non-retryable failures before a message is dead-lettered. Default 3. */
  maxAttempts?: number;
  /**
   * Messages of one partition this member handles at the same time. Default 1: one after another,
   * in order. Above 1, later messages start while earlier ones run (or wait out a retry backoff);
   * for work keyed by something other than order (one job per video). At most
   * `MAX_UNCOMMITTED_SPAN` messages past the lowest unfinished one are started ahead of it.
   */
  perPartitionConcurrency?: number;
  /**
   * Cap on the messages this member handles at the same time over all its partitions. Default:
   * `perPartitionConcurrency` for each partition it is working on (Kafka: × the bus's `partitions`
   * option, the partitions its consumer works on at once; in-process: × its assigned partitions).
   */
  maxInFlight?: number;
}

export interface Subscription {
  /** Leaves the group after the in-flight messages finish (their offsets are committed). */
  stop(): Promise<void>;
}

/**
 * What both adapters return from `subscribe`: `crash()` is a test hook that simulates a process
 * dying mid-handler (the in-flight message is abandoned uncommitted, the member leaves the group).
 */
export interface CrashableSubscription extends Subscription {
  crash(): Promise<void>;
}

export interface EventBus {
  /** Resolves once the bus has accepted the messages durably (Kafka: acks=all). */
  publish(topic: string, messages: readonly BusMessage[]): Promise<void>;
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  /** Creates topics (and their `.dlq` twins) if missing. Idempotent. */
  ensureTopics(topics: readonly string[]): Promise<void>;
  /** True when the bus can currently accept publishes (readiness). */
  isHealthy(): Promise<boolean>;
  /**
   * True when `groupId` has at least one live member holding its partitions right now (Kafka: the
   * group is Stable with members). False while it has none, is rebalancing, or cannot be asked in
   * time (bounded like `isHealthy`). Lets a producer of work notice that nobody would take it.
   */
  hasActiveMembers(groupId: string): Promise<boolean>;
  close(): Promise<void>;
}

/** Messages behind the end of the log, per consumer group and topic (summed over partitions). */
export interface ConsumerLag {
  groupId: string;
  topic: string;
  lag: number;
}

/**
 * What both adapters report, for metrics (service-kit's `busMetrics()` implements it). Every call is
 * synchronous and cheap; `lagSource` is called once at construction with a function that reads the
 * lag of this bus's consumer groups (the caller decides when, e.g. at scrape time).
 */
export interface BusObserver {
  published?(topic: string, count: number): void;
  /** One handler run: ok (committed), retry (RetryableError), failed (any other error). */
  handled?(topic: string, groupId: string, outcome: 'ok' | 'retry' | 'failed'): void;
  deadLettered?(topic: string, groupId: string): void;
  /** A consumer kafkajs gave up on (a crash it does not restart) is being started again. */
  consumerRevived?(groupId: string): void;
  lagSource?(read: () => Promise<ConsumerLag[]>): void;
}

/** Thrown by a handler to say "not now, try again": never dead-lettered. */
export class RetryableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RetryableError';
  }
}

export const dlqTopic = (topic: string): string => `${topic}.dlq`;
