/**
 * No lost usage, no double counting: two gateway replicas (access modules: admission and daily
 * request counting, credit reservations, commits and both outbox relays) take a burst of mixed
 * requests, charged and free, some failing, while the Kafka broker is stopped and restarted; the
 * billing service consumes the credit-usage events into its ledger and the request-usage reports
 * into its request counts on the MongoDB-compatible server. Afterwards, per account, the ledger's
 * sum equals the credits the API reported charging, with exactly one ledger entry per non-zero
 * charge, and the admin usage report read through billing's gRPC GetUsage (the gateway's
 * createBillingUsageReader, what startGateway wires) counts every request the API counted, free
 * ones included, by operation, even with the gateway's own daily_requests record gone.
 *
 * It starts a Kafka broker of its own with `scripts/engines.sh` (its own ENGINES_DIR, the shared
 * build cache) and restarts that one (same port, same data): the suites running in parallel keep the
 * shared broker, which never goes down under them.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { billingV1 } from '@subx/contracts';
import { createMongoDocumentStore, createRedisKeyValueStore, systemClock } from '@subx/ports';
import type { KafkaEventBus, KeyValueStore } from '@subx/ports';
import { createGrpcClient, createLogger } from '@subx/service-kit';
import type { GrpcClient } from '@subx/service-kit';
import { brokerList, describeWithEngine } from '@subx/testing/engines';
import { loadBillingConfig, startBillingService } from '../../services/billing/src/index.ts';
import type { RunningBillingService } from '../../services/billing/src/index.ts';
import {
  DAILY_REQUESTS_COLLECTION,
  METERED_OPERATIONS,
  createAccessModule,
  createBillingUsageReader,
} from '../../services/gateway/src/access/index.ts';
import type { AccessModule, Operation } from '../../services/gateway/src/access/index.ts';
import { silentLogger, testKafkaBus, uniqueTopics } from './support.ts';

const run = promisify(execFile);
const repoRoot = new URL('../../', import.meta.url).pathname;
const PEPPER = 'system-test-pepper-0123456789-abcdefghijkl';

/** Deterministic pseudo-random numbers (mulberry32), so a failing burst can be replayed. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A broker that just started answers metadata before it serves consumer groups ("the coordinator is
 * loading" while __consumer_offsets is created): wait, bounded, until a group lookup succeeds.
 */
async function untilGroupsServed(brokers: string[], timeoutMs = 90_000): Promise<void> {
  const admin = new Kafka({ clientId: 'recon-warmup', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      try {
        // finding the group's coordinator fails until the broker serves groups
        await admin.describeGroups(['recon-warmup']);
        return;
      } catch (err) {
        if (Date.now() > deadline) throw err;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    await admin.disconnect();
  }
}

interface Charge {
  account: string;
  operation: Operation;
  charged: number;
}

/** A request the API counted against the daily limit (admitted, not refunded). */
interface Counted {
  account: string;
  operation: Operation;
}

describeWithEngine('kafka', 'usage reconciliation across a Kafka restart', () => {
  describeWithEngine('mongo', 'with the MongoDB-compatible server', (mongoUrl) => {
    describeWithEngine('redis', 'and Redis', (redisUrl) => {
      // the broker this test stops and restarts is its own
      const enginesEnv = { ...process.env, ENGINES_DIR: join(tmpdir(), `subx-engines-recon-${process.pid}`) };
      let brokers: string[] = [];
      const topics = uniqueTopics('recon');
      const requestTopic = `t.billing.request-usage.recon.${randomUUID().slice(0, 8)}`;
      const suffix = randomUUID().replaceAll('-', '').slice(0, 12);
      const gatewayDb = `recon_gw_${suffix}`;
      const billingDb = `recon_billing_${suffix}`;
      const buses: KafkaEventBus[] = [];
      const stores: ReturnType<typeof createMongoDocumentStore>[] = [];
      const kvs: KeyValueStore[] = [];
      const replicas: AccessModule[] = [];
      let billing: RunningBillingService;
      let billingBus: KafkaEventBus;
      let client: GrpcClient<billingV1.BillingServiceClient>;

      beforeAll(async () => {
        const { stdout } = await run('bash', ['scripts/engines.sh', 'up', 'kafka'], {
          cwd: repoRoot,
          env: enginesEnv,
          timeout: 300_000,
        });
        const csv = /KAFKA_BROKERS=(\S+)/.exec(stdout)?.[1];
        if (!csv) throw new Error(`scripts/engines.sh up kafka printed no broker: ${stdout}`);
        brokers = brokerList(csv);
        await untilGroupsServed(brokers);
        billingBus = testKafkaBus(brokers, 'recon-billing');
        const billingStore = createMongoDocumentStore({ url: mongoUrl, dbName: billingDb });
        buses.push(billingBus);
        stores.push(billingStore);
        billing = await startBillingService({
          config: loadBillingConfig({
            GRPC_PORT: '0',
            CREDIT_USAGE_TOPIC: topics.usage,
            REQUEST_USAGE_TOPIC: requestTopic,
            KAFKA_GROUP_ID: `billing-${suffix}`,
          }),
          store: billingStore,
          bus: billingBus,
          logger: createLogger({ service: 'billing', level: 'silent' }),
          host: '127.0.0.1',
        });
        client = createGrpcClient(billingV1.BillingServiceClient, `127.0.0.1:${billing.port}`, {
          defaultDeadlineMs: 10_000,
        });
        for (let i = 0; i < 2; i++) {
          const store = createMongoDocumentStore({ url: mongoUrl, dbName: gatewayDb });
          const kv = createRedisKeyValueStore({ url: redisUrl });
          const bus = testKafkaBus(brokers, `recon-gateway-${i}`);
          stores.push(store);
          kvs.push(kv);
          buses.push(bus);
          const replica = createAccessModule({
            store,
            kv,
            bus,
            clock: systemClock,
            logger: silentLogger,
            config: {
              apiKeyPepper: PEPPER,
              adminToken: 'recon-admin-token',
              outboxIntervalMs: 200,
              creditUsageTopic: topics.usage,
              requestUsageTopic: requestTopic,
            },
          });
          await replica.start();
          replicas.push(replica);
        }
      });

      afterAll(async () => {
        client?.close();
        await Promise.allSettled(replicas.map((r) => r.stop()));
        await billing?.stop(2_000);
        await Promise.allSettled(buses.map((b) => b.close()));
        await Promise.allSettled(stores.map((s) => s.dropDatabase().catch(() => undefined)));
        await Promise.allSettled([...stores.map((s) => s.close()), ...kvs.map((k) => k.close())]);
        await run('bash', ['scripts/engines.sh', 'down', 'kafka'], { cwd: repoRoot, env: enginesEnv }).catch(
          () => undefined,
        );
      });

      it('after a burst of mixed requests across a broker restart, billing has what the API charged and counted', async () => {
        const created = await Promise.all(
          [0, 1, 2].map(() => replicas[0]!.accounts.createAccount({ tier: 'business', credits: 100_000 })),
        );
        const accounts = created.map((c) => c.account._id);
        const keys = new Map(created.map((c) => [c.account._id, c.apiKey]));
        const random = prng(20_260_301);
        const charges: Charge[] = [];
        const counted: Counted[] = [];

        /**
         * One API request: admission (counted against the daily limit), then its credit flow:
         * reserve the worst case, commit what succeeded, or release and refund the count (a 5xx).
         */
        async function request(i: number): Promise<void> {
          const replica = replicas[i % 2]!;
          const account = accounts[Math.floor(random() * accounts.length)]!;
          const pick = random();
          const [operation, reserved, charged]: [Operation, number, number] =
            pick < 0.3
              ? ['batch', 10, Math.floor(random() * 11)]
              : pick < 0.45
                ? ['playlist', 25, Math.floor(random() * 26)]
                : pick < 0.65
                  ? ['summarize', 6, [2, 4, 6][Math.floor(random() * 3)]!]
                  : pick < 0.8
                    ? ['comments', 4, Math.floor(random() * 5)]
                    : pick < 0.85
                      ? ['comments_analyze', 3, random() < 0.5 ? 3 : 0]
                      : ['extract', 0, 0];
          const failed = random() < 0.1;
          const admission = await replica.access.admit({ apiKey: keys.get(account), operation });
          const reservation = await replica.credits.reserve({
            accountId: account,
            operation,
            amount: reserved,
            requestId: `req-${i}`,
            idempotencyKey: `idem-${i}`,
          });
          if (failed) {
            await reservation.release();
            await admission.refund();
            return;
          }
          await reservation.commit(charged, { successfulItems: charged, attemptedItems: reserved });
          // The API has answered with `charged` credits from here on, and counted the request.
          charges.push({ account, operation, charged });
          counted.push({ account, operation });
        }

        const burst = async (from: number, count: number) => {
          for (let i = from; i < from + count; i += 10) {
            await Promise.all(
              Array.from({ length: Math.min(10, from + count - i) }, (_, k) => request(i + k)),
            );
          }
        };

        await burst(0, 60);
        // Stop the broker (kept down 3 s) while requests keep being charged, then it comes back.
        const restart = run('bash', ['scripts/engines.sh', 'restart', 'kafka', '--pause', '3'], {
          cwd: repoRoot,
          env: enginesEnv,
          timeout: 120_000,
        });
        await burst(60, 60);
        await restart;
        await burst(120, 40);

        const expected = new Map<string, { credits: number; entries: number }>();
        for (const c of charges) {
          const e = expected.get(c.account) ?? { credits: 0, entries: 0 };
          if (c.charged > 0)
            expected.set(c.account, { credits: e.credits + c.charged, entries: e.entries + 1 });
          else expected.set(c.account, e);
        }
        expect(charges.filter((c) => c.charged > 0).length).toBeGreaterThan(100);

        /** Where the events are, for the failure message: still in an outbox, or waiting in Kafka. */
        const whereAreTheEvents = async () =>
          JSON.stringify({
            outboxes: await Promise.all(replicas.map((r) => r.outboxRelay.backlog().catch(String))),
            billingLag: await billingBus.consumerLag().catch(String),
          });
        for (const account of accounts) {
          const want = expected.get(account) ?? { credits: 0, entries: 0 };
          try {
            await expect
              .poll(() => billing.ledger.ledgerTotal(account), { timeout: 90_000, interval: 500 })
              .toEqual(want);
          } catch (error) {
            throw new Error(`${String(error)}; events: ${await whereAreTheEvents()}`, { cause: error });
          }
          // The balance the API keeps tells the same story.
          expect((await replicas[1]!.accounts.get(account))?.credits).toBe(100_000 - want.credits);
        }

        expect(counted.filter((c) => c.operation === 'extract').length).toBeGreaterThan(10);

        // The gateway's own record of counted requests is lost (it only rebuilds the Redis
        // counter): the report does not depend on it.
        for (const replica of replicas) await replica.requestLog.flush();
        const gatewayStore = stores[1]!;
        await gatewayStore.collection(DAILY_REQUESTS_COLLECTION).deleteMany({});
        expect(await gatewayStore.collection(DAILY_REQUESTS_COLLECTION).countDocuments({})).toBe(0);

        // The admin usage route's data source (startGateway): GetUsage through the adapter.
        const reader = createBillingUsageReader((req) => client.getUsage(req));
        const today = new Date().toISOString().slice(0, 10);
        for (const account of accounts) {
          const mine = charges.filter((c) => c.account === account);
          const requests = counted.filter((c) => c.account === account);
          const want = {
            total_credits: expected.get(account)?.credits ?? 0,
            total_requests: requests.length,
            operations: Object.fromEntries(
              METERED_OPERATIONS.map((op) => [
                op,
                {
                  requests: requests.filter((c) => c.operation === op).length,
                  credits: mine.filter((c) => c.operation === op).reduce((s, c) => s + c.charged, 0),
                },
              ]),
            ),
          };
          // Request counts lag by one flush interval plus the relay: poll, bounded.
          await expect
            .poll(
              async () => {
                const usage = await reader.getUsage({ accountId: account, from: today, to: today });
                return {
                  total_credits: usage.total_credits,
                  total_requests: usage.total_requests,
                  operations: usage.days[0]!.operations,
                };
              },
              { timeout: 30_000, interval: 250 },
            )
            .toEqual(want);
        }
      });
    });
  });
});
