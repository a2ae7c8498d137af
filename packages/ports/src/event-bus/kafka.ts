/**
 * EventBus on Kafka. One idempotent producer (acks=all), one admin client, and one kafkajs consumer
 * per subscription (a group member, kafka/member.ts). The parts live in kafka/: the client and its
 * connections, topic setup, offsets, the member with its batch window and revival.
 */
import { dlqTopic, type BusMessage, type ConsumerLag } from './port.ts';
import type { RetryBackoff } from './shared.ts';
import { createConnections, createKafkaClient } from './kafka/connections.ts';
import { startMember, type Member } from './kafka/member.ts';
import { consumerLagOf, type SubscribedGroups } from './kafka/offsets.ts';
import type { KafkaEventBus, KafkaEventBusOptions } from './kafka/options.ts';
import { createTopicSetup } from './kafka/topics.ts';
import { withTimeout } from './kafka/util.ts';
import { KEY_SCHEMA_ID_HEADER, VALUE_SCHEMA_ID_HEADER } from './schema-registry.ts';

export { type KafkaConsumerTuning, type KafkaEventBus, type KafkaEventBusOptions } from './kafka/options.ts';
export { isRoutineRebalance, isTransient } from './kafka/connections.ts';

export function createKafkaEventBus(options: KafkaEventBusOptions): KafkaEventBus {
  const logger = options.logger;
  const observer = options.observer;
  const partitions = options.partitions ?? 3;
  const retryBackoff: Required<RetryBackoff> = {
    initialMs: options.retryBackoff?.initialMs ?? 100,
    maxMs: options.retryBackoff?.maxMs ?? 5_000,
  };
  const healthTimeoutMs = options.healthTimeoutMs ?? 2_000;
  const sendTimeoutMs = options.sendTimeoutMs ?? 30_000;
  const retentionMs = options.topicRetentionMs;
  if (retentionMs !== undefined && !(Number.isSafeInteger(retentionMs) && retentionMs > 0))
    throw new RangeError(`topicRetentionMs must be a positive integer of ms, not ${retentionMs}`);

  const kafka = createKafkaClient(options, logger);
  const connections = createConnections(kafka);
  const members = new Set<Member>();
  /** Consumer groups subscribed through this bus (whose lag we report): their topics and start. */
  const subscribed: SubscribedGroups = new Map();
  let closed = false;
  const topics = createTopicSetup({
    connections,
    partitions,
    replicationFactor: options.replicationFactor,
    topicSetupTimeoutMs: options.topicSetupTimeoutMs ?? 60_000,
    retentionMs,
    logger,
    isClosed: () => closed,
  });

  const valueSchemaIds = options.valueSchemaIds;
  /**
   * The message's headers with its topic's schema id. A schema id header that came in with copied
   * headers (a dead letter carries its original's, decoded as text) is dropped: it would be mangled,
   * and a `.dlq` topic has no schema of its own.
   */
  const withSchemaId = (topic: string, headers: BusMessage['headers']): Record<string, string | Buffer> => {
    const out: Record<string, string | Buffer> = { ...headers };
    delete out[VALUE_SCHEMA_ID_HEADER];
    delete out[KEY_SCHEMA_ID_HEADER];
    const id = valueSchemaIds?.get(topic);
    if (id) out[VALUE_SCHEMA_ID_HEADER] = id;
    return out;
  };

  const send = async (topic: string, messages: readonly BusMessage[]): Promise<void> => {
    await withTimeout(topics.ensureExact([topic]), sendTimeoutMs, `kafka topic check for ${topic}`);
    const current = connections.getProducer();
    try {
      await withTimeout(
        current.then((producer) =>
          producer.send({
            topic,
            acks: -1,
            messages: messages.map((m) => ({
              key: m.key,
              value: Buffer.from(m.value.buffer, m.value.byteOffset, m.value.byteLength),
              headers: withSchemaId(topic, m.headers),
            })),
          }),
        ),
        sendTimeoutMs,
        `kafka send to ${topic}`,
      );
    } catch (error) {
      connections.dropProducer(current);
      topics.forget(topic);
      throw error;
    }
    observer?.published?.(topic, messages.length);
  };

  const consumerLag = async (): Promise<ConsumerLag[]> => {
    if (closed || subscribed.size === 0) return [];
    return consumerLagOf(await connections.getAdmin(), subscribed);
  };
  observer?.lagSource?.(consumerLag);

  return {
    consumerLag,

    async publish(topic, messages) {
      if (closed) throw new Error('event bus is closed');
      if (messages.length === 0) return;
      await send(topic, messages);
    },

    subscribe: (subscribeOptions) =>
      startMember(
        {
          kafka,
          connections,
          topics,
          send,
          partitions,
          retryBackoff,
          joinTimeoutMs: options.joinTimeoutMs ?? 60_000,
          reviveDelayMs: options.reviveDelayMs ?? 1_000,
          consumerTuning: options.consumer,
          logger,
          observer,
          subscribed,
          members,
          isClosed: () => closed,
        },
        subscribeOptions,
      ),

    async ensureTopics(names) {
      await topics.ensureExact(names.flatMap((t) => [t, dlqTopic(t)]));
    },

    async isHealthy() {
      if (closed) return false;
      const connecting = connections.getAdmin();
      try {
        const admin = await withTimeout(connecting, healthTimeoutMs, 'kafka admin connect');
        await withTimeout(admin.describeCluster(), healthTimeoutMs, 'kafka describeCluster');
        return true;
      } catch {
        // The next check connects afresh. A connection whose first request went unanswered stays
        // stuck for kafkajs's request timeout (30 s) and then its retries: an extractor in a CI
        // cluster waited out its whole start (60 s) on one, while its twin pod connected at once.
        connections.dropAdmin(connecting);
        return false;
      }
    },

    async hasActiveMembers(groupId) {
      if (closed) return false;
      try {
        const admin = await withTimeout(connections.getAdmin(), healthTimeoutMs, 'kafka admin connect');
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
      await connections.disconnect();
    },
  };
}
