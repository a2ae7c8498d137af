import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { creditUsageV1 } from '@subx/contracts';
import {
  ManualClock,
  createInMemoryDocumentStore,
  createInProcessEventBus,
  dlqTopic,
  silentLogger,
} from '@subx/ports';
import type {
  Collection,
  DeliveredMessage,
  Doc,
  DocumentStore,
  InProcessEventBus,
  Subscription,
} from '@subx/ports';
import { CREDIT_USAGE_TOPIC, startUsageConsumer } from './usage-consumer.ts';
import { createUsageLedger } from './usage-ledger.ts';
import type { UsageLedger } from './usage-ledger.ts';
import { usageEvent } from '../../test/ledger-support.ts';

const encode = (e: creditUsageV1.CreditUsage) => creditUsageV1.CreditUsage.encode(e).finish();

describe('usage consumer (in-process bus, in-memory store)', () => {
  let bus: InProcessEventBus;
  let clock: ManualClock;
  let store: DocumentStore;
  const subs: Subscription[] = [];

  beforeEach(() => {
    bus = createInProcessEventBus({ retryBackoff: { initialMs: 5, maxMs: 20 } });
    clock = new ManualClock(Date.UTC(2026, 2, 10, 13));
    store = createInMemoryDocumentStore();
  });
  afterEach(async () => {
    await Promise.all(subs.splice(0).map((s) => s.stop()));
    await bus.close();
  });

  async function start(ledger: UsageLedger) {
    subs.push(await startUsageConsumer({ bus, ledger, logger: silentLogger }));
  }

  it('records events published before it started (new group reads from the beginning), once each', async () => {
    const ledger = await createUsageLedger(store, clock);
    const a = usageEvent({ credits: 2 });
    const b = usageEvent({ credits: 5, operation: 'summarize' });
    await bus.publish(CREDIT_USAGE_TOPIC, [
      { key: 'acc-1', value: encode(a) },
      { key: 'acc-1', value: encode(b) },
      { key: 'acc-1', value: encode(a) },
    ]);
    await start(ledger);
    await bus.publish(CREDIT_USAGE_TOPIC, [{ key: 'acc-1', value: encode(b) }]);
    await expect.poll(async () => (await ledger.ledgerTotal('acc-1')).entries).toBe(2);
    await expect
      .poll(async () => (await ledger.usage('acc-1', '2026-03-10', '2026-03-10')).totalCredits)
      .toBe(7);
  });

  it('dead-letters undecodable and invalid events and goes on with the next ones', async () => {
    const ledger = await createUsageLedger(store, clock);
    await start(ledger);
    const dead: DeliveredMessage[] = [];
    subs.push(
      await bus.subscribe({
        groupId: 'dlq-reader',
        topics: [dlqTopic(CREDIT_USAGE_TOPIC)],
        fromBeginning: true,
        handler: async (m) => void dead.push(m),
      }),
    );
    await bus.publish(CREDIT_USAGE_TOPIC, [
      { key: 'acc-1', value: Uint8Array.from([0x0a, 0xff, 0xff]) },
      { key: 'acc-1', value: encode(usageEvent({ operation: 'DROP TABLE' })) },
      { key: 'acc-1', value: encode(usageEvent({ credits: 3 })) },
    ]);
    await expect.poll(() => dead.length).toBe(2);
    await expect.poll(async () => (await ledger.ledgerTotal('acc-1')).credits).toBe(3);
    expect(dead[1]!.headers['x-error-message']).toContain('operation');
  });

  it('keeps retrying while the store fails, then records the event once', async () => {
    let failures = 3;
    const failing: DocumentStore = {
      collection<T extends Doc>(name: string): Collection<T> {
        const c = store.collection<T>(name);
        return {
          ...c,
          createIndex: (k, o) => c.createIndex(k, o),
          find: (f, o) => c.find(f, o),
          findOne: (f) => c.findOne(f),
          updateOne: (f, u, o) => c.updateOne(f, u, o),
          findOneAndUpdate: (f, u, o) => c.findOneAndUpdate(f, u, o),
          insertOne: (doc) =>
            failures-- > 0 ? Promise.reject(new Error('store unreachable')) : c.insertOne(doc),
        };
      },
      ping: () => store.ping(),
      close: () => store.close(),
    };
    const ledger = await createUsageLedger(failing, clock);
    await start(ledger);
    await bus.publish(CREDIT_USAGE_TOPIC, [{ key: 'acc-1', value: encode(usageEvent({ credits: 9 })) }]);
    await expect.poll(async () => (await ledger.ledgerTotal('acc-1')).credits).toBe(9);
    expect(failures).toBeLessThan(0);
    // More than maxAttempts failures, yet nothing was dead-lettered: store errors are retryable.
    const dead: DeliveredMessage[] = [];
    subs.push(
      await bus.subscribe({
        groupId: 'dlq-reader-2',
        topics: [dlqTopic(CREDIT_USAGE_TOPIC)],
        fromBeginning: true,
        handler: async (m) => void dead.push(m),
      }),
    );
    // A sentinel behind anything that might have been dead-lettered: once it is read, all was.
    await bus.publish(dlqTopic(CREDIT_USAGE_TOPIC), [{ key: 'acc-1', value: Uint8Array.from([1]) }]);
    await expect.poll(() => dead.length).toBeGreaterThan(0);
    expect(dead.map((m) => Array.from(m.value))).toEqual([[1]]);
  });
});
