/**
 * Schema ids in headers against a real registry (Apicurio Registry's Confluent-compatible API, from
 * `scripts/engines.sh up registry`) and a real broker: what a team outside reads with Confluent's
 * registry-aware deserializer, fed nothing of ours but the URL.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { SchemaRegistryClient } from '@confluentinc/schemaregistry/dist/schemaregistry-client.js';
import { ProtobufDeserializer } from '@confluentinc/schemaregistry/dist/serde/protobuf.js';
import { SchemaId, SerdeType } from '@confluentinc/schemaregistry/dist/serde/serde.js';
import { creditUsageV1, eventDescriptors, extractJobV1, topicSchemas } from '@subx/contracts';
import { brokerList, describeWithEngine, describeWithRegistry } from '@subx/testing/engines';
import { Kafka, logLevel, type IHeaders } from 'kafkajs';
import { afterAll, expect, it } from 'vitest';
import { createKafkaEventBus } from '../src/event-bus/kafka.ts';
import { registerTopicSchemas, VALUE_SCHEMA_ID_HEADER } from '../src/event-bus/schema-registry.ts';

const usage = creditUsageV1.CreditUsage.fromPartial({
  envelope: {
    eventId: randomUUID(),
    occurredAt: '2026-03-15T10:00:00.000Z',
    accountId: 'acct-registry',
    idempotencyKey: 'idem-registry',
  },
  operation: 'batch',
  credits: 12n,
  requestId: 'req-registry',
  successfulItems: 3,
  attemptedItems: 4,
  attributes: { video: 'dQw4w9WgXcQ' },
});

/** A loopback port nobody listens on: a registry that is down. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The first message of `topic`, read with plain kafkajs (binary headers intact). */
async function firstMessage(brokers: string[], topic: string) {
  const kafka = new Kafka({ brokers, clientId: 'registry-test-reader', logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: `registry-test-${randomUUID()}` });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    return await new Promise<{ value: Buffer; headers: IHeaders }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`nothing on ${topic} within 30 s`)), 30_000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          clearTimeout(timer);
          resolve({ value: message.value!, headers: message.headers ?? {} });
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
}

describeWithEngine('kafka', 'schema ids in headers', (brokers) => {
  describeWithRegistry('against a real registry', (url) => {
    const descriptors = eventDescriptors();
    const run = randomUUID().slice(0, 8);
    const usageTopic = `t-registry-usage-${run}`;
    const resultsTopic = `t-registry-results-${run}`;
    const plainTopic = `t-registry-plain-${run}`;
    const ids = new Map<string, Buffer>();
    const bus = createKafkaEventBus({
      brokers: brokerList(brokers),
      clientId: 'registry-test',
      valueSchemaIds: ids,
    });
    afterAll(() => bus.close());

    it('registers <topic>-value and a registry-aware deserializer decodes the real message', async () => {
      const registered = await registerTopicSchemas(
        { url, timeoutMs: 30_000 },
        descriptors,
        topicSchemas({ creditUsage: usageTopic, extractResults: resultsTopic }),
      );
      for (const [topic, id] of registered) ids.set(topic, id);
      expect([...registered.keys()].sort()).toEqual([resultsTopic, usageTopic].sort());

      // The header resolves, through the registry alone, to our protobuf schema of the topic.
      const reader = new SchemaRegistryClient({ baseURLs: [url] });
      const usageId = new SchemaId('PROTOBUF');
      usageId.fromBytes(registered.get(usageTopic)!);
      expect(usageId.messageIndexes).toEqual([0]);
      const schema = await reader.getBySubjectAndId(`${usageTopic}-value`, usageId.id!, 'serialized');
      expect(schema.schemaType).toBe('PROTOBUF');
      const latest = await reader.getLatestSchemaMetadata(`${usageTopic}-value`);
      expect(latest.id).toBe(usageId.id);
      // ExtractResult is the second message of its file: index 1.
      const resultId = new SchemaId('PROTOBUF');
      resultId.fromBytes(registered.get(resultsTopic)!);
      expect(resultId.messageIndexes).toEqual([1]);

      const payload = creditUsageV1.CreditUsage.encode(usage).finish();
      await bus.publish(usageTopic, [{ key: 'acct-registry', value: payload, headers: { ce_id: 'ev-1' } }]);
      const received = await firstMessage(brokerList(brokers), usageTopic);
      // The payload is the ts-proto bytes, unchanged: consumers that ignore the registry still work.
      expect(Buffer.compare(received.value, Buffer.from(payload))).toBe(0);
      expect(
        Buffer.compare(received.headers[VALUE_SCHEMA_ID_HEADER] as Buffer, registered.get(usageTopic)!),
      ).toBe(0);
      expect(String(received.headers.ce_id)).toBe('ev-1');

      const deserializer = new ProtobufDeserializer(reader, SerdeType.VALUE, {});
      const decoded = (await deserializer.deserialize(
        usageTopic,
        received.value,
        received.headers,
      )) as Record<string, unknown>;
      expect(decoded.$typeName).toBe('subx.events.v1.CreditUsage');
      expect(decoded).toMatchObject({
        operation: 'batch',
        credits: 12n,
        requestId: 'req-registry',
        successfulItems: 3,
        attemptedItems: 4,
        attributes: { video: 'dQw4w9WgXcQ' },
        envelope: { eventId: usage.envelope!.eventId, accountId: 'acct-registry' },
      });
    });

    it('registering again gives the same ids (a restart, another replica)', async () => {
      const again = await registerTopicSchemas(
        { url },
        descriptors,
        topicSchemas({ creditUsage: usageTopic, extractResults: resultsTopic }),
      );
      expect(again.get(usageTopic)).toEqual(ids.get(usageTopic));
      expect(again.get(resultsTopic)).toEqual(ids.get(resultsTopic));
    });

    it('two services registering the same new subjects at once both start, with the same ids', async () => {
      const topics = topicSchemas({
        creditUsage: `t-registry-race-usage-${run}`,
        requestUsage: `t-registry-race-requests-${run}`,
      });
      const [first, second] = await Promise.all([
        registerTopicSchemas({ url, timeoutMs: 30_000 }, descriptors, topics),
        registerTopicSchemas({ url, timeoutMs: 30_000 }, descriptors, topics),
      ]);
      for (const { topic } of topics) {
        expect(first.get(topic)).toBeDefined();
        expect(second.get(topic)).toEqual(first.get(topic));
      }
    });

    it('adds no schema id to a topic it has none for, and drops one copied in with headers', async () => {
      const job = extractJobV1.ExtractJob.encode(
        extractJobV1.ExtractJob.fromPartial({ correlationId: 'c-1' }),
      ).finish();
      // A dead letter carries its original's headers, the binary id decoded as text.
      await bus.publish(plainTopic, [
        { key: 'k', value: job, headers: { [VALUE_SCHEMA_ID_HEADER]: '\u0000garbled' } },
      ]);
      const received = await firstMessage(brokerList(brokers), plainTopic);
      expect(received.headers[VALUE_SCHEMA_ID_HEADER]).toBeUndefined();
      expect(Buffer.compare(received.value, Buffer.from(job))).toBe(0);
    });
  });
});

describeWithRegistry('a schema registry that refuses or is down', (url) => {
  it('gives up after its bound with the registry, the subject and the cause, never the password', async () => {
    const port = await closedPort();
    const started = Date.now();
    const error = await registerTopicSchemas(
      {
        url: `http://127.0.0.1:${port}/apis/ccompat/v7`,
        basicAuthUserInfo: 'team:s3cret-pass',
        timeoutMs: 1_500,
      },
      eventDescriptors(),
      topicSchemas({ creditUsage: 'billing.credit-usage.v1' }),
    ).then(
      () => new Error('registered, unexpectedly'),
      (err: unknown) => err as Error,
    );
    expect(error).toBeInstanceOf(Error);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error.message).toContain(`http://127.0.0.1:${port}/apis/ccompat/v7`);
    expect(error.message).toContain(
      'billing.credit-usage.v1-value (subx.events.v1.CreditUsage) not registered after',
    );
    expect(error.message).toMatch(/ECONNREFUSED/);
    expect(error.message).not.toContain('s3cret');
    // No cause: the HTTP client's error would carry the request's Authorization header into logs.
    expect(error.cause).toBeUndefined();
  });

  it('stops at once on an answer that will not change (a path that is no registry)', async () => {
    const started = Date.now();
    const error = await registerTopicSchemas(
      { url: `${new URL(url).origin}/no-registry-here`, timeoutMs: 20_000 },
      eventDescriptors(),
      topicSchemas({ creditUsage: `t-refused-${randomUUID().slice(0, 8)}` }),
    ).then(
      () => new Error('registered, unexpectedly'),
      (err: unknown) => err as Error,
    );
    expect(error.message).toMatch(/after 1 attempt: HTTP 404/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('refuses a topic whose message it has no descriptor of, before any request', async () => {
    await expect(
      registerTopicSchemas({ url }, eventDescriptors(), [
        { topic: 't-x', messageType: 'subx.events.v1.Nope' },
      ]),
    ).rejects.toThrow('schema registry: no descriptor of subx.events.v1.Nope (topic t-x)');
  });
});
