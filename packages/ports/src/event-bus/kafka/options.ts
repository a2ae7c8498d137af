import type { Logger } from '../../logger.ts';
/** The Kafka event bus's options and interface. */
import type { BusObserver, ConsumerLag, CrashableSubscription, EventBus, SubscribeOptions } from '../port.ts';
import type { RetryBackoff } from '../shared.ts';
import type { KafkaSecurity } from '../kafka-security.ts';

/** Pino-shaped logger; kafkajs's own log lines are routed here (or dropped when absent). */

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
  /**
   * How long a fetch waits at the broker for new records. Default 1 000 ms. A fetch returns as soon
   * as a record arrives, so this bounds only an idle consumer's poll, and how long its disconnect
   * waits for the fetch in flight: with kafkajs's 5 s each consumer stopped in about 5 s, and one
   * process holding three of them (`npm start` on Kafka) ran out its shutdown deadline.
   */
  maxWaitTimeInMs?: number;
}

/** Short group timings: a crashed-and-restarted consumer joins in about 11 s instead of 30-63 s. */
export const DEFAULT_CONSUMER_TUNING = {
  sessionTimeout: 10_000,
  heartbeatInterval: 1_000,
  rebalanceTimeout: 10_000,
  maxWaitTimeInMs: 1_000,
} as const;

/** Topic → the bytes of its `__value_schema_id` header (../schema-registry.ts). */
export type ValueSchemaIds = ReadonlyMap<string, Buffer>;

export interface KafkaEventBusOptions {
  brokers: readonly string[];
  clientId: string;
  logger?: Logger;
  /** Partitions of topics created by `ensureTopics`. Default 3. */
  partitions?: number;
  /** Default: the broker's default.replication.factor. */
  replicationFactor?: number;
  /**
   * `retention.ms` of the topics this bus creates (and their `.dlq` twins): every subx topic
   * carries account ids, so this bounds how long they stay on the brokers. Topics that exist
   * already are left as they are; one whose retention differs is logged once at info
   * (kafka/topics.ts). Default: the broker's own default (services pass KAFKA_TOPIC_RETENTION_MS).
   */
  topicRetentionMs?: number;
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
  /**
   * Topic → its `__value_schema_id` header (schema-registry.ts), read at each publish: a map filled
   * once the registry answered at start-up. Topics without one get no schema id header.
   */
  valueSchemaIds?: ValueSchemaIds;
}

export interface KafkaEventBus extends EventBus {
  subscribe(options: SubscribeOptions): Promise<CrashableSubscription>;
  /** Lag of the groups subscribed through this bus: partition end minus committed offset, summed. */
  consumerLag(): Promise<ConsumerLag[]>;
}
