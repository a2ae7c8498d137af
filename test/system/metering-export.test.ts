/**
 * The metering export across a billing restart on the real broker: billing forwards credit usage to
 * a local CloudEvents batch ingest (METERING_INGEST_URL). The ingest first fails (503), billing
 * stops and starts again, the ingest recovers: it receives every event, deduplicated by id exactly
 * the published set, each under its `ce_id`; events published after the restart follow.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CLOUD_EVENT_KINDS, cloudEventHeaders, creditUsageV1 } from '@subx/contracts';
import { createInMemoryDocumentStore } from '@subx/ports';
import type { BusMessage, KafkaEventBus } from '@subx/ports';
import { createLogger } from '@subx/service-kit';
import { brokerList, describeWithEngine } from '@subx/testing/engines';
import { loadBillingConfig, startBillingService } from '../../services/billing/src/index.ts';
import type { MeteringEvent, RunningBillingService } from '../../services/billing/src/index.ts';
import { testKafkaBus, uniqueTopics } from './support.ts';

function usage(account: string, credits: number): BusMessage & { id: string } {
  const id = randomUUID();
  const occurredAt = new Date().toISOString();
  const value = creditUsageV1.CreditUsage.encode({
    envelope: { eventId: id, occurredAt, accountId: account, idempotencyKey: '', traceParent: '' },
    operation: 'extract',
    credits: BigInt(credits),
    requestId: `req-${id}`,
    successfulItems: 1,
    attemptedItems: 1,
    attributes: {},
  }).finish();
  const headers = cloudEventHeaders(CLOUD_EVENT_KINDS.creditUsage, {
    id,
    time: occurredAt,
    subject: account,
  });
  return { id, key: account, value, headers };
}

describeWithEngine('kafka', 'metering export across a billing restart', (brokersCsv) => {
  const brokers = brokerList(brokersCsv);
  const topic = uniqueTopics('metering').usage;
  const buses: KafkaEventBus[] = [];
  const received: MeteringEvent[] = [];
  let accepting = false;
  let failedRequests = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (!accepting) {
        failedRequests += 1;
        res.writeHead(503).end();
        return;
      }
      received.push(...(JSON.parse(Buffer.concat(chunks).toString('utf8')) as MeteringEvent[]));
      res.writeHead(202).end();
    });
  });
  let url = '';
  const group = `metering-${randomUUID().slice(0, 8)}`;
  const store = createInMemoryDocumentStore();

  const startBilling = (clientId: string): Promise<RunningBillingService> => {
    const bus = testKafkaBus(brokers, clientId);
    buses.push(bus);
    return startBillingService({
      config: loadBillingConfig({
        GRPC_PORT: '0',
        CREDIT_USAGE_TOPIC: topic,
        REQUEST_USAGE_TOPIC: `${topic}.requests`,
        KAFKA_GROUP_ID: `${group}-ledger`,
        METERING_INGEST_URL: url,
        METERING_GROUP_ID: group,
      }),
      store,
      bus,
      logger: createLogger({ service: 'billing', level: 'silent' }),
      host: '127.0.0.1',
    });
  };

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/events`;
  });

  afterAll(async () => {
    await Promise.allSettled(buses.map((b) => b.close()));
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('delivers each event once by id across a restart while the ingest was failing', async () => {
    const producer = testKafkaBus(brokers, 'metering-producer');
    buses.push(producer);
    await producer.ensureTopics([topic]);
    const first = await startBilling('metering-billing-1');
    const before = Array.from({ length: 8 }, (_, i) => usage(`acct-${i % 2}`, i + 1));
    await producer.publish(topic, before);
    await expect.poll(() => failedRequests, { timeout: 30_000 }).toBeGreaterThanOrEqual(1);
    await first.stop(5_000);

    accepting = true;
    const second = await startBilling('metering-billing-2');
    const after = Array.from({ length: 4 }, (_, i) => usage('acct-2', i + 1));
    await producer.publish(topic, after);
    const want = new Set([...before, ...after].map((e) => e.id));
    await expect
      .poll(() => new Set(received.map((e) => e.id)), { timeout: 60_000, interval: 200 })
      .toEqual(want);
    const byId = new Map(received.map((e) => [e.id, e]));
    expect(byId.get(before[0]!.id)).toMatchObject({
      type: 'com.subx.credit-usage.v1',
      source: '//subx/gateway',
      subject: 'acct-0',
      data: { credits: 1, operation: 'extract' },
    });
    // The ledger, consuming the same topic in its own group, has them all once.
    await expect
      .poll(async () => (await second.ledger.ledgerTotal('acct-2')).entries, { timeout: 30_000 })
      .toBe(4);
    await second.stop(5_000);
  });
});
