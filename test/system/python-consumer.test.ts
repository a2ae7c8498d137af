/**
 * A consumer that is not ours reads our usage events: examples/python-consumer (confluent-kafka and
 * the classes protoc generates from proto/, run by its run.sh in a cached virtual environment) reads
 * the credit-usage events the gateway's real access module published on the real broker, checks
 * their CloudEvents headers against their payloads, decodes them and sums the credits per account;
 * the sums equal what the API charged and what billing's ledger (consuming the same topic) holds.
 * The stores are the in-memory adapters (they pass the same contract as MongoDB and Redis); Kafka is
 * real.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventDescriptors, topicSchemas } from '@subx/contracts';
import {
  createInMemoryDocumentStore,
  createInMemoryKeyValueStore,
  registerTopicSchemas,
  systemClock,
} from '@subx/ports';
import type { KafkaEventBus } from '@subx/ports';
import { createLogger } from '@subx/service-kit';
import { brokerList, describeWithEngine } from '@subx/testing/engines';
import { loadBillingConfig, startBillingService } from '../../services/billing/src/index.ts';
import type { RunningBillingService } from '../../services/billing/src/index.ts';
import { createAccessModule } from '../../services/gateway/src/access/index.ts';
import type { AccessModule, Operation } from '../../services/gateway/src/access/index.ts';
import { silentLogger, testKafkaBus, uniqueTopics } from './support.ts';

const run = promisify(execFile);
const repoRoot = new URL('../../', import.meta.url).pathname;

describeWithEngine('kafka', 'the Python consumer example on real Kafka', (brokersCsv) => {
  const brokers = brokerList(brokersCsv);
  const topics = uniqueTopics('python');
  const buses: KafkaEventBus[] = [];
  let gateway: AccessModule;
  let billing: RunningBillingService;
  const registryUrl = process.env.SCHEMA_REGISTRY_URL?.trim();
  const valueSchemaIds = new Map<string, Buffer>();

  beforeAll(async () => {
    // The virtual environment and generated classes, made once and cached (the first time from PyPI).
    await run('bash', ['examples/python-consumer/run.sh', '--help'], { cwd: repoRoot, timeout: 300_000 });
    // With a schema registry (CI starts one), the usage events carry its binary `__value_schema_id`
    // header too: the consumer must read them all the same.
    if (registryUrl) {
      const registered = await registerTopicSchemas(
        { url: registryUrl },
        eventDescriptors(),
        topicSchemas({ creditUsage: topics.usage }),
      );
      for (const [topic, id] of registered) valueSchemaIds.set(topic, id);
    }
    const gatewayBus = testKafkaBus(brokers, 'python-example-gateway', 3, valueSchemaIds);
    const billingBus = testKafkaBus(brokers, 'python-example-billing');
    buses.push(gatewayBus, billingBus);
    await gatewayBus.ensureTopics([topics.usage]);
    billing = await startBillingService({
      config: loadBillingConfig({
        GRPC_PORT: '0',
        CREDIT_USAGE_TOPIC: topics.usage,
        REQUEST_USAGE_TOPIC: `${topics.usage}.requests`,
        KAFKA_GROUP_ID: `billing-python-${randomUUID().slice(0, 8)}`,
      }),
      store: createInMemoryDocumentStore(),
      bus: billingBus,
      logger: createLogger({ service: 'billing', level: 'silent' }),
      host: '127.0.0.1',
    });
    gateway = createAccessModule({
      store: createInMemoryDocumentStore(),
      kv: createInMemoryKeyValueStore({ clock: systemClock }),
      bus: gatewayBus,
      clock: systemClock,
      logger: silentLogger,
      config: {
        apiKeyPepper: 'python-consumer-test-pepper-0123456789abcd',
        adminToken: 'python-consumer-admin-token',
        outboxIntervalMs: 100,
        creditUsageTopic: topics.usage,
        requestUsageTopic: `${topics.usage}.requests`,
      },
    });
    await gateway.start();
  }, 320_000);

  afterAll(async () => {
    await gateway?.stop();
    await billing?.stop(2_000);
    await Promise.allSettled(buses.map((b) => b.close()));
  });

  it('reads, checks and decodes the usage events; its sums equal the charges and the ledger', async () => {
    const accounts = await Promise.all(
      [0, 1].map(
        async () => (await gateway.accounts.createAccount({ tier: 'business', credits: 1_000 })).account._id,
      ),
    );
    const plan: [Operation, number, number][] = [
      ['batch', 10, 7],
      ['summarize', 6, 4],
      ['playlist', 25, 0], // nothing charged: no event
      ['comments', 4, 3],
      ['batch', 10, 10],
      ['comments_analyze', 3, 3],
    ];
    const charged = new Map<string, number>(accounts.map((a) => [a, 0]));
    let events = 0;
    for (const [i, [operation, amount, credits]] of plan.entries()) {
      for (const account of accounts) {
        const reservation = await gateway.credits.reserve({
          accountId: account,
          operation,
          amount,
          requestId: `req-${i}-${account}`,
        });
        await reservation.commit(credits, { successfulItems: credits, attemptedItems: amount });
        charged.set(account, charged.get(account)! + credits);
        if (credits > 0) events += 1;
      }
    }
    // Billing's ledger has every charge once (it consumes the same topic).
    for (const account of accounts) {
      await expect
        .poll(async () => (await billing.ledger.ledgerTotal(account)).credits, {
          timeout: 30_000,
          interval: 200,
        })
        .toBe(charged.get(account));
    }

    const started = Date.now();
    const { stdout } = await run(
      'bash',
      [
        'examples/python-consumer/run.sh',
        '--brokers',
        brokersCsv,
        '--topic',
        topics.usage,
        '--expect',
        String(events),
        '--timeout',
        '60',
      ],
      { cwd: repoRoot, timeout: 90_000 },
    );
    const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
      events: number;
      credits: number;
      by_account: Record<string, number>;
      schema_ids: number;
    };
    expect(result.events).toBe(events);
    expect(result.schema_ids).toBe(registryUrl ? events : 0);
    expect(result.by_account).toEqual(Object.fromEntries(charged));
    for (const account of accounts) {
      expect(result.by_account[account]).toBe((await billing.ledger.ledgerTotal(account)).credits);
    }
    expect(result.credits).toBe([...charged.values()].reduce((a, b) => a + b, 0));
    // The consumer itself (cached environment): a few seconds at most.
    expect(Date.now() - started).toBeLessThan(60_000);
  });
});
