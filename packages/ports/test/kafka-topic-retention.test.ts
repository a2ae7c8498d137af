/**
 * `topicRetentionMs` on a real broker: the topics the bus creates (by `ensureTopics`, with their
 * `.dlq` twins, and on a first publish) carry it, read back with `describeConfigs`; a topic that
 * exists already keeps its own retention, and the difference is logged once at info.
 */
import { randomUUID } from 'node:crypto';
import { ConfigResourceTypes, ConfigSource, Kafka, logLevel, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_KAFKA_TIMINGS, brokerList, describeWithEngine } from '@subx/testing/engines';
import { createKafkaEventBus, type KafkaEventBus } from '../src/event-bus/kafka.ts';
import { silentLogger, type Logger } from '../src/logger.ts';

const DAY_MS = 86_400_000;

/** retention.ms of each topic as the broker reports it, and whether it is the topic's own setting (not the broker's). */
async function retentionOf(admin: Admin, topics: readonly string[]) {
  const { resources } = await admin.describeConfigs({
    includeSynonyms: false,
    resources: topics.map((name) => ({
      type: ConfigResourceTypes.TOPIC,
      name,
      configNames: ['retention.ms'],
    })),
  });
  return Object.fromEntries(
    resources.map((r) => {
      const entry = r.configEntries.find((e) => e.configName === 'retention.ms');
      return [
        r.resourceName,
        { value: entry?.configValue, own: entry?.configSource === ConfigSource.TOPIC_CONFIG },
      ];
    }),
  );
}

function infoRecorder(): { logger: Logger; infos: { fields: object; message: string | undefined }[] } {
  const infos: { fields: object; message: string | undefined }[] = [];
  return {
    infos,
    logger: { ...silentLogger, info: (fields, message) => void infos.push({ fields, message }) },
  };
}

describe('Kafka event bus: topicRetentionMs', () => {
  it('refuses a retention that is not a positive integer of ms', () => {
    for (const topicRetentionMs of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() =>
        createKafkaEventBus({ brokers: ['127.0.0.1:9'], clientId: 'retention-check', topicRetentionMs }),
      ).toThrow(/topicRetentionMs must be a positive integer of ms/);
    }
  });
});

describeWithEngine('kafka', 'Kafka event bus: retention of the topics it creates', (brokers) => {
  const buses: KafkaEventBus[] = [];
  const admin = new Kafka({
    clientId: 'retention-admin',
    brokers: brokerList(brokers),
    logLevel: logLevel.NOTHING,
  }).admin();
  const newBus = (options: { topicRetentionMs?: number; logger?: Logger } = {}) => {
    const bus = createKafkaEventBus({
      brokers: brokerList(brokers),
      clientId: 'retention-test',
      ...FAST_KAFKA_TIMINGS,
      ...options,
    });
    buses.push(bus);
    return bus;
  };
  beforeAll(() => admin.connect());
  afterAll(async () => {
    await Promise.allSettled(buses.map((b) => b.close()));
    await admin.disconnect();
  });

  it('creates topics and their .dlq twins with the configured retention.ms', async () => {
    const bus = newBus({ topicRetentionMs: 2 * DAY_MS });
    const ensured = `t.retention.${randomUUID().slice(0, 8)}`;
    const published = `t.retention.${randomUUID().slice(0, 8)}`;
    await bus.ensureTopics([ensured]);
    // A topic first met by a publish is created by the bus too, with the same setting.
    await bus.publish(published, [{ key: 'k', value: new TextEncoder().encode('v') }]);
    const twoDays = { value: String(2 * DAY_MS), own: true };
    expect(await retentionOf(admin, [ensured, `${ensured}.dlq`, published])).toEqual({
      [ensured]: twoDays,
      [`${ensured}.dlq`]: twoDays,
      [published]: twoDays,
    });
  }, 60_000);

  it("without the option leaves the broker's default", async () => {
    const bus = newBus();
    const topic = `t.retention.${randomUUID().slice(0, 8)}`;
    await bus.ensureTopics([topic]);
    expect((await retentionOf(admin, [topic]))[topic]?.own).toBe(false);
  }, 60_000);

  it('leaves an existing topic with another retention as it is, and says so once at info', async () => {
    const topic = `t.retention.${randomUUID().slice(0, 8)}`;
    const matching = `t.retention.${randomUUID().slice(0, 8)}`;
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        { topic, numPartitions: 1, configEntries: [{ name: 'retention.ms', value: String(DAY_MS) }] },
        {
          topic: matching,
          numPartitions: 1,
          configEntries: [{ name: 'retention.ms', value: String(3 * DAY_MS) }],
        },
      ],
    });
    const { logger, infos } = infoRecorder();
    const bus = newBus({ topicRetentionMs: 3 * DAY_MS, logger });
    await bus.ensureTopics([topic, matching]);
    await bus.ensureTopics([topic, matching]);
    await bus.publish(topic, [{ key: 'k', value: new TextEncoder().encode('v') }]);

    const retention = await retentionOf(admin, [topic, `${topic}.dlq`, matching]);
    expect(retention[topic]).toEqual({ value: String(DAY_MS), own: true });
    expect(retention[matching]).toEqual({ value: String(3 * DAY_MS), own: true });
    // The missing twin is created with the configured value.
    expect(retention[`${topic}.dlq`]).toEqual({ value: String(3 * DAY_MS), own: true });
    const reports = infos.filter((i) => i.message?.includes('another retention.ms'));
    expect(reports).toEqual([
      {
        fields: { retentionMs: 3 * DAY_MS, topics: { [topic]: String(DAY_MS) } },
        message:
          'kafka topics exist with another retention.ms; left as they are (docs/events.md, "Retention")',
      },
    ]);
  }, 60_000);
});
