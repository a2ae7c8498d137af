/**
 * The billing service end to end: credit-usage and request-usage events on the bus → ledger, daily
 * aggregates and request counts in the document store → gRPC GetUsage. Once on the embedded
 * adapters, once on real Kafka + FerretDB (with two consumers in one group, one of them crashing
 * mid-stream, and poison events; concurrent request reports from two connections).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountDeletedV1, billingV1, creditUsageV1, requestUsageV1 } from '@subx/contracts';
import {
  createInMemoryDocumentStore,
  createInProcessEventBus,
  createKafkaEventBus,
  createMongoDocumentStore,
  dlqTopic,
} from '@subx/ports';
import type { DeliveredMessage, DocumentStore, EventBus, KafkaEventBus } from '@subx/ports';
import { createGrpcClient, createLogger } from '@subx/service-kit';
import type { GrpcClient } from '@subx/service-kit';
import { FAST_KAFKA_TIMINGS, brokerList, describeWithEngine } from '@subx/testing/engines';
import {
  REQUEST_COUNTS_COLLECTION,
  createRequestCounts,
  createUsageLedger,
  loadBillingConfig,
  startBillingService,
  startUsageConsumer,
} from '../src/index.ts';
import type { RunningBillingService } from '../src/index.ts';
import { requestReport, usageEvent } from './ledger-support.ts';

const logger = createLogger({ service: 'billing-test', level: 'silent' });
const encode = (e: creditUsageV1.CreditUsage) => creditUsageV1.CreditUsage.encode(e).finish();
const encodeReport = (e: requestUsageV1.RequestUsage) => requestUsageV1.RequestUsage.encode(e).finish();

function suite(
  name: string,
  make: () => Promise<{
    bus: EventBus;
    store: DocumentStore;
    topic: string;
    requestTopic: string;
    accountTopic: string;
    close(): Promise<void>;
  }>,
) {
  describe(name, () => {
    let env: Awaited<ReturnType<typeof make>>;
    let service: RunningBillingService;
    let client: GrpcClient<billingV1.BillingServiceClient>;
    const account = `acc-${randomUUID()}`;

    beforeAll(async () => {
      env = await make();
      service = await startBillingService({
        config: loadBillingConfig({
          GRPC_PORT: '0',
          CREDIT_USAGE_TOPIC: env.topic,
          REQUEST_USAGE_TOPIC: env.requestTopic,
          ACCOUNT_EVENTS_TOPIC: env.accountTopic,
          KAFKA_GROUP_ID: `billing-${randomUUID()}`,
          KAFKA_ACCOUNT_DELETIONS_GROUP_ID: `billing-deletions-${randomUUID()}`,
        }),
        store: env.store,
        bus: env.bus,
        logger,
        host: '127.0.0.1',
      });
      client = createGrpcClient(billingV1.BillingServiceClient, `127.0.0.1:${service.port}`, {
        defaultDeadlineMs: 10_000,
      });
    });
    afterAll(async () => {
      client?.close();
      await service?.stop(2_000);
      await env?.close();
    });

    it('serves per-day requests and credits by operation over gRPC; redelivered events count once', async () => {
      const events = [
        usageEvent({
          accountId: account,
          operation: 'batch',
          credits: 3,
          occurredAt: '2026-03-10T08:00:00Z',
        }),
        usageEvent({
          accountId: account,
          operation: 'batch',
          credits: 1,
          occurredAt: '2026-03-10T09:00:00Z',
        }),
        usageEvent({
          accountId: account,
          operation: 'summarize',
          credits: 4,
          occurredAt: '2026-03-10T23:59:59Z',
        }),
        usageEvent({
          accountId: account,
          operation: 'playlist',
          credits: 9,
          occurredAt: '2026-03-12T00:00:00Z',
        }),
      ];
      // The outbox relay may publish an event again after a crash: every event twice.
      const messages = [...events, ...events].map((e) => ({ key: account, value: encode(e) }));
      await env.bus.publish(env.topic, messages);
      // Request counts of two gateway processes, cumulative per source; extract costs nothing and
      // is seen only here. Duplicates and a report overtaken by a newer one change nothing.
      const [a, b] = [randomUUID(), randomUUID()];
      const reports = [
        requestReport({ accountId: account, source: a, sequence: 1, ops: { extract: 4, batch: 1 } }),
        requestReport({ accountId: account, source: a, sequence: 3, ops: { extract: 10, batch: 2 } }),
        requestReport({ accountId: account, source: b, sequence: 1, ops: { extract: 1, summarize: 1 } }),
        requestReport({ accountId: account, source: a, sequence: 2, ops: { extract: 7, batch: 2 } }),
        requestReport({
          accountId: account,
          source: b,
          sequence: 1,
          date: '2026-03-12',
          ops: { playlist: 1 },
        }),
      ];
      await env.bus.publish(
        env.requestTopic,
        [...reports, ...reports].map((r) => ({ key: account, value: encodeReport(r) })),
      );

      const request = { accountId: account, fromDate: '2026-03-01', toDate: '2026-03-31' };
      const expected = {
        accountId: account,
        totalCredits: 17n,
        totalRequests: 15n,
        days: [
          {
            date: '2026-03-10',
            requests: 14n,
            credits: 8n,
            operations: [
              { operation: 'batch', requests: 2n, credits: 4n },
              { operation: 'extract', requests: 11n, credits: 0n },
              { operation: 'summarize', requests: 1n, credits: 4n },
            ],
          },
          {
            date: '2026-03-12',
            requests: 1n,
            credits: 9n,
            operations: [{ operation: 'playlist', requests: 1n, credits: 9n }],
          },
        ],
      };
      await expect.poll(() => client.getUsage(request), { timeout: 30_000, interval: 100 }).toEqual(expected);
      expect(await service.ledger.ledgerTotal(account)).toEqual({ credits: 17, entries: 4 });
      const oneDay = await client.getUsage({
        accountId: account,
        fromDate: '2026-03-12',
        toDate: '2026-03-12',
      });
      expect(oneDay.totalCredits).toBe(9n);
      expect(oneDay.totalRequests).toBe(1n);
    });

    it('a deleted workspace: its id is in no record any more, its usage under a pseudonym, the totals unchanged', async () => {
      const gone = `acct_${randomUUID().replaceAll('-', '')}`;
      const events = [3, 5].map((credits, i) =>
        usageEvent({ accountId: gone, credits, occurredAt: `2026-03-1${i}T10:00:00Z` }),
      );
      await env.bus.publish(
        env.topic,
        events.map((e) => ({ key: gone, value: encode(e) })),
      );
      await env.bus.publish(env.requestTopic, [
        {
          key: gone,
          value: encodeReport(requestReport({ accountId: gone, sequence: 1, ops: { batch: 2 } })),
        },
      ]);
      const range = { fromDate: '2026-03-01', toDate: '2026-03-31' };
      await expect
        .poll(async () => (await client.getUsage({ accountId: gone, ...range })).totalRequests, {
          timeout: 30_000,
          interval: 100,
        })
        .toBe(2n);
      const before = await client.getUsage({ accountId: gone, ...range });
      expect(before.totalCredits).toBe(8n);

      const eventId = randomUUID();
      const deleted = accountDeletedV1.AccountDeleted.encode({
        envelope: {
          eventId,
          occurredAt: new Date().toISOString(),
          accountId: gone,
          idempotencyKey: eventId,
          traceParent: '',
        },
        requestedAt: new Date().toISOString(),
      }).finish();
      await env.bus.publish(env.accountTopic, [{ key: gone, value: deleted }]);
      const holding = async () => {
        let n = 0;
        for (const name of ['usage_ledger', 'usage_daily', REQUEST_COUNTS_COLLECTION]) {
          n += await env.store.collection(name).countDocuments({ account_id: gone });
        }
        return n;
      };
      await expect.poll(holding, { timeout: 30_000, interval: 100 }).toBe(0);
      expect((await client.getUsage({ accountId: gone, ...range })).days).toEqual([]);
      const pseudonym = await service.pseudonyms.accountOf(gone);
      expect(pseudonym).toMatch(/^anon_/);
      expect(await client.getUsage({ accountId: pseudonym, ...range })).toEqual({
        ...before,
        accountId: pseudonym,
      });
    });

    it('rejects bad ranges as INVALID_REQUEST', async () => {
      const bad = [
        { accountId: '', fromDate: '2026-03-01', toDate: '2026-03-02' },
        { accountId: account, fromDate: '2026-3-1', toDate: '2026-03-02' },
        { accountId: account, fromDate: '2026-03-05', toDate: '2026-03-01' },
        { accountId: account, fromDate: '2025-01-01', toDate: '2026-03-01' },
      ];
      for (const req of bad)
        await expect(client.getUsage(req)).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    });
  });
}

suite('billing service (embedded adapters)', async () => {
  const bus = createInProcessEventBus({ retryBackoff: { initialMs: 5, maxMs: 20 } });
  const store = createInMemoryDocumentStore();
  return {
    bus,
    store,
    topic: 'billing.credit-usage.v1',
    requestTopic: 'billing.request-usage.v1',
    accountTopic: 'accounts.v1',
    close: async () => {
      await bus.close();
      await store.close();
    },
  };
});

const kafkaTuning = FAST_KAFKA_TIMINGS;

describeWithEngine('kafka', 'billing on Kafka', (brokers) => {
  describeWithEngine('mongo', 'and FerretDB', (mongoUrl) => {
    const dbName = `billing_${randomUUID().replaceAll('-', '')}`;
    const stores: ReturnType<typeof createMongoDocumentStore>[] = [];
    const openStore = () => {
      const s = createMongoDocumentStore({ url: mongoUrl, dbName });
      stores.push(s);
      return s;
    };
    afterAll(async () => {
      await stores[0]?.dropDatabase().catch(() => undefined);
      await Promise.all(stores.map((s) => s.close()));
    });

    suite('billing service (real engines)', async () => {
      const bus = createKafkaEventBus({
        brokers: brokerList(brokers),
        clientId: 'billing-test',
        ...kafkaTuning,
      });
      return {
        bus,
        store: openStore(),
        topic: `t.billing.usage.${randomUUID()}`,
        requestTopic: `t.billing.requests.${randomUUID()}`,
        accountTopic: `t.billing.accounts.${randomUUID()}`,
        close: () => bus.close(),
      };
    });

    it('request reports applied concurrently over two connections end at the newest report per source', async () => {
      const clock = { now: () => Date.now() };
      const [one, two] = await Promise.all([
        createRequestCounts(openStore(), clock),
        createRequestCounts(openStore(), clock),
      ]);
      const account = `acc-${randomUUID()}`;
      const sources = [randomUUID(), randomUUID(), randomUUID()];
      const reports = sources.flatMap((source, k) =>
        Array.from({ length: 8 }, (_, i) =>
          requestReport({ accountId: account, source, sequence: i + 1, ops: { extract: (i + 1) * (k + 1) } }),
        ),
      );
      // Every report twice, in a scrambled order, half through each connection, all at once: the
      // first report of each source races the document's creation.
      const scrambled = [...reports, ...reports].sort((x, y) =>
        x.envelope!.eventId < y.envelope!.eventId ? -1 : 1,
      );
      const outcomes = await Promise.all(scrambled.map((r, i) => (i % 2 ? one : two).apply(r)));
      expect(outcomes.filter((o) => o === 'applied').length).toBeGreaterThanOrEqual(3);
      const days = await one.days(account, '2026-03-10', '2026-03-10');
      expect(Object.fromEntries(days.get('2026-03-10')!)).toEqual({ extract: 8 + 16 + 24 });
    });

    it('two consumers in one group, one crashing mid-stream, poison events: every valid event exactly once', async () => {
      const topic = `t.billing.usage.${randomUUID()}`;
      const group = `billing-${randomUUID()}`;
      const account = `acc-${randomUUID()}`;
      const buses: KafkaEventBus[] = [0, 1].map((i) =>
        createKafkaEventBus({
          brokers: brokerList(brokers),
          clientId: `billing-consumer-${i}`,
          ...kafkaTuning,
        }),
      );
      const clock = { now: () => Date.now() };
      try {
        const ledgers = await Promise.all([
          createUsageLedger(openStore(), clock),
          createUsageLedger(openStore(), clock),
        ]);
        const [first, second] = await Promise.all(
          [0, 1].map((i) =>
            startUsageConsumer({ bus: buses[i]!, ledger: ledgers[i]!, logger, topic, groupId: group }),
          ),
        );
        const dead: DeliveredMessage[] = [];
        await buses[0]!.subscribe({
          groupId: `dlq-${randomUUID()}`,
          topics: [dlqTopic(topic)],
          fromBeginning: true,
          handler: async (m) => void dead.push(m),
        });

        // 60 events over 6 keys (so both members own partitions), each published twice, and 2 poison.
        const events = Array.from({ length: 60 }, (_, i) =>
          usageEvent({ accountId: account, operation: i % 2 ? 'batch' : 'comments', credits: (i % 5) + 1 }),
        );
        const expected = events.reduce((s, e) => s + Number(e.credits), 0);
        const keyed = (e: creditUsageV1.CreditUsage, i: number) => ({
          key: `${account}-${i % 6}`,
          value: encode(e),
        });
        await buses[1]!.publish(topic, events.slice(0, 30).map(keyed));
        await buses[1]!.publish(topic, [
          { key: `${account}-0`, value: Uint8Array.from([0x0a, 0xff, 0xff]) },
          { key: `${account}-1`, value: encode(usageEvent({ accountId: '' })) },
        ]);
        // Crash one member while events are flowing: its uncommitted message goes to the other.
        await (first as unknown as { crash(): Promise<void> }).crash();
        await buses[1]!.publish(topic, [...events.slice(30), ...events].map(keyed));

        const ledger = ledgers[1]!;
        await expect
          .poll(async () => (await ledger.ledgerTotal(account)).entries, { timeout: 60_000, interval: 200 })
          .toBe(60);
        await expect.poll(() => dead.length, { timeout: 30_000 }).toBe(2);
        expect(await ledger.ledgerTotal(account)).toEqual({ credits: expected, entries: 60 });
        const usage = await ledger.usage(account, '2026-03-10', '2026-03-10');
        expect(usage).toMatchObject({ totalCredits: expected, totalRequests: 60 });
        expect(usage.days[0]!.operations.map((o) => [o.operation, o.requests])).toEqual([
          ['batch', 30],
          ['comments', 30],
        ]);
        await second?.stop();
      } finally {
        await Promise.all(buses.map((b) => b.close()));
      }
    });
  });
});
