/**
 * The kafkajs client of one bus, with its log routing, and the bus's two shared connections: one
 * idempotent producer and one admin client, each connected on first use and dropped (to be
 * connected afresh) when it failed.
 */
import { Kafka, Partitioners, logLevel, type Admin, type Producer } from 'kafkajs';
import { kafkaSecurityConfig } from '../kafka-security.ts';
import type { Logger } from '../../logger.ts';
import type { KafkaEventBusOptions } from './options.ts';
import { installRequestQueueTimerFix } from './request-queue-timer.ts';
import { withTimeout } from './util.ts';

export function createKafkaClient(
  options: Pick<KafkaEventBusOptions, 'clientId' | 'brokers' | 'security'>,
  logger: Logger | undefined,
): Kafka {
  installRequestQueueTimerFix();
  return new Kafka({
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
        if (level <= logLevel.WARN && (isRoutineRebalance(message, fields) || isTransient(message, fields)))
          logger.info(entry, message);
        else if (level === logLevel.ERROR) logger.error(entry, message);
        else if (level === logLevel.WARN) logger.warn(entry, message);
        else logger.debug?.(entry, message);
      },
  });
}

// kafkajs's messages for the error codes a rebalance produces (REBALANCE_IN_PROGRESS,
// ILLEGAL_GENERATION, NOT_COORDINATOR, UNKNOWN_MEMBER_ID) and for its own re-join steps.
const ROUTINE_REBALANCE =
  /group is rebalancing|rebalance in progress|re-joining|generation id is not valid|not the correct coordinator|not aware of this member/i;

/** True for log entries that only narrate a consumer-group rebalance. */
export function isRoutineRebalance(message: string, fields: Record<string, unknown>): boolean {
  return ROUTINE_REBALANCE.test(message) || ROUTINE_REBALANCE.test(String(fields.error ?? ''));
}

// kafkajs's messages for retryable errors of a broker, or a topic, that has just started: the group
// coordinator still loading (COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS), a new
// partition whose leader is being elected (NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE), and the
// consumer restart kafkajs does for them. It retries each; one that never passes is still an error
// where it matters (the join's timeout, the send that fails).
const TRANSIENT =
  /coordinator is not available|coordinator is loading|not the leader for that topic-partition|no leader for this topic-partition|restarting the consumer in/i;

/** True for log entries about a retryable error kafkajs retries by itself. */
export function isTransient(message: string, fields: Record<string, unknown>): boolean {
  return TRANSIENT.test(message) || TRANSIENT.test(String(fields.error ?? ''));
}

export interface KafkaConnections {
  getProducer(): Promise<Producer>;
  getAdmin(): Promise<Admin>;
  /**
   * A producer whose send failed or hung is dropped and the next send connects a fresh one: a
   * kafkajs producer can stay wedged after a broker restart (a request that never completes holds
   * its single in-flight slot; an idempotent producer whose sequence the broker no longer accepts
   * fails every later send), which stopped the outbox relay for good in one CI run. A fresh
   * producer gets a new producer id, so the broker's duplicate detection does not span the switch:
   * every consumer here dedupes on the event id (billing) or ignores repeats (fan-out results).
   */
  dropProducer(failed: Promise<Producer>): void;
  /** An admin client whose request failed is dropped the same way. */
  dropAdmin(failed: Promise<Admin>): void;
  /** Disconnects whichever of the two is connected. */
  disconnect(): Promise<void>;
}

export function createConnections(kafka: Kafka): KafkaConnections {
  let producerPromise: Promise<Producer> | null = null;
  let adminPromise: Promise<Admin> | null = null;

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

  return {
    getProducer: () =>
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
      )),

    getAdmin: () =>
      (adminPromise ??= connectOnce(
        () => kafka.admin(),
        () => (adminPromise = null),
      )),

    dropProducer(failed) {
      if (producerPromise !== failed) return;
      producerPromise = null;
      void failed
        .then((producer) => withTimeout(producer.disconnect(), 5_000, 'kafka producer disconnect'))
        .catch(() => undefined);
    },

    dropAdmin(failed) {
      if (adminPromise !== failed) return;
      adminPromise = null;
      void failed
        .then((admin) => withTimeout(admin.disconnect(), 5_000, 'kafka admin disconnect'))
        .catch(() => undefined);
    },

    async disconnect() {
      const clients = await Promise.allSettled([producerPromise, adminPromise]);
      await Promise.allSettled(
        clients.map((c) => (c.status === 'fulfilled' && c.value ? c.value.disconnect() : undefined)),
      );
    },
  };
}
