import { beforeEach, describe, expect, it } from 'vitest';
import { creditUsageV1 } from '@subx/contracts';
import { ManualClock, createInMemoryDocumentStore } from '@subx/ports';
import type { Collection, Doc, DocumentStore } from '@subx/ports';
import { InvalidUsageEventError, createUsageLedger } from './usage-ledger.ts';
import { usageEvent } from '../../test/ledger-support.ts';
import type { DailyAggregate, LedgerEntry, UsageLedger } from './usage-ledger.ts';

/** A store whose `failOn` hook can make one collection operation throw, like a dropped connection. */
function flakyStore(inner: DocumentStore) {
  let failNext: ((collection: string, op: string, args: unknown[]) => boolean) | null = null;
  const store: DocumentStore = {
    collection<T extends Doc>(name: string): Collection<T> {
      const c = inner.collection<T>(name);
      return new Proxy(c, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver) as unknown;
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            if (failNext?.(name, String(prop), args)) {
              failNext = null;
              return Promise.reject(new Error(`connection lost during ${name}.${String(prop)}`));
            }
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
    },
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
  return { store, failOn: (f: typeof failNext) => (failNext = f) };
}

describe('usage ledger (in-memory store)', () => {
  let clock: ManualClock;
  let store: DocumentStore;
  let ledger: UsageLedger;

  beforeEach(async () => {
    clock = new ManualClock(Date.UTC(2026, 2, 10, 13));
    store = createInMemoryDocumentStore();
    ledger = await createUsageLedger(store, clock);
  });

  it('aggregates per UTC day and operation; totals are the sum of the days', async () => {
    await ledger.record(usageEvent({ operation: 'batch', credits: 3 }));
    await ledger.record(usageEvent({ operation: 'batch', credits: 2 }));
    await ledger.record(usageEvent({ operation: 'summarize', credits: 4 }));
    await ledger.record(
      usageEvent({ operation: 'summarize', credits: 6, occurredAt: '2026-03-10T23:59:59.999Z' }),
    );
    await ledger.record(
      usageEvent({ operation: 'playlist', credits: 7, occurredAt: '2026-03-11T00:00:00.000Z' }),
    );
    await ledger.record(usageEvent({ accountId: 'acc-2', credits: 100 }));

    const report = await ledger.usage('acc-1', '2026-03-01', '2026-03-31');
    expect(report.days).toEqual([
      {
        date: '2026-03-10',
        requests: 4,
        credits: 15,
        operations: [
          { operation: 'batch', requests: 2, credits: 5 },
          { operation: 'summarize', requests: 2, credits: 10 },
        ],
      },
      {
        date: '2026-03-11',
        requests: 1,
        credits: 7,
        operations: [{ operation: 'playlist', requests: 1, credits: 7 }],
      },
    ]);
    expect(report).toMatchObject({ accountId: 'acc-1', totalRequests: 5, totalCredits: 22 });
    expect((await ledger.usage('acc-1', '2026-03-11', '2026-03-11')).totalCredits).toBe(7);
    expect((await ledger.usage('acc-1', '2026-04-01', '2026-04-30')).days).toEqual([]);
    expect(await ledger.ledgerTotal('acc-1')).toEqual({ credits: 22, entries: 5 });
  });

  it('records an event once however often it is delivered, also concurrently', async () => {
    const event = usageEvent({ credits: 5 });
    expect(await ledger.record(event)).toBe('recorded');
    expect(await ledger.record(event)).toBe('duplicate');
    const again = await Promise.all(Array.from({ length: 10 }, () => ledger.record(event)));
    expect(again.every((o) => o === 'duplicate')).toBe(true);

    const other = usageEvent({ credits: 1 });
    const racing = await Promise.all(Array.from({ length: 10 }, () => ledger.record(other)));
    expect(racing.filter((o) => o === 'recorded')).toHaveLength(1);

    expect((await ledger.usage('acc-1', '2026-03-10', '2026-03-10')).totalCredits).toBe(6);
    expect(await ledger.ledgerTotal('acc-1')).toEqual({ credits: 6, entries: 2 });
  });

  it('a crash between the ledger insert and the count is healed by the redelivery, counted once', async () => {
    const flaky = flakyStore(store);
    const l = await createUsageLedger(flaky.store, clock);
    const event = usageEvent({ credits: 4 });
    flaky.failOn((name, op) => name === 'usage_daily' && op === 'findOneAndUpdate');
    await expect(l.record(event)).rejects.toThrow('connection lost');
    expect((await l.usage('acc-1', '2026-03-10', '2026-03-10')).totalCredits).toBe(0);
    expect(await l.record(event)).toBe('duplicate');
    expect(await l.record(event)).toBe('duplicate');
    expect((await l.usage('acc-1', '2026-03-10', '2026-03-10')).totalCredits).toBe(4);
  });

  it('a crash between the count and marking the entry counted is not counted twice', async () => {
    const flaky = flakyStore(store);
    const l = await createUsageLedger(flaky.store, clock);
    const event = usageEvent({ credits: 4 });
    flaky.failOn((name, op) => name === 'usage_ledger' && op === 'updateOne');
    await expect(l.record(event)).rejects.toThrow('connection lost');
    expect((await l.usage('acc-1', '2026-03-10', '2026-03-10')).totalCredits).toBe(4);
    expect(await l.record(event)).toBe('duplicate');
    expect((await l.usage('acc-1', '2026-03-10', '2026-03-10')).totalCredits).toBe(4);
    const entry = await store
      .collection<LedgerEntry>('usage_ledger')
      .findOne({ _id: event.envelope!.eventId });
    expect(entry?.counted).toBe(true);
  });

  it('prunes idempotency markers after the grace period, and redelivery after that still counts once', async () => {
    const l = await createUsageLedger(store, clock, { markerGraceMs: 60_000 });
    const daily = store.collection<DailyAggregate>('usage_daily');
    const early = Array.from({ length: 20 }, () => usageEvent({ credits: 1 }));
    for (const e of early) await l.record(e);
    expect(Object.keys((await daily.findOne({ _id: 'acc-1:2026-03-10' }))!.pending)).toHaveLength(20);

    clock.advance(61_000);
    await l.record(usageEvent({ credits: 1 }));
    const aggregate = (await daily.findOne({ _id: 'acc-1:2026-03-10' }))!;
    expect(Object.keys(aggregate.pending)).toHaveLength(1);
    for (const e of early) expect(await l.record(e)).toBe('duplicate');
    expect(await l.usage('acc-1', '2026-03-10', '2026-03-10')).toMatchObject({
      totalRequests: 21,
      totalCredits: 21,
    });
  });

  it('rejects malformed events as InvalidUsageEventError (poison), records nothing', async () => {
    const bad = [
      creditUsageV1.CreditUsage.fromPartial({ operation: 'batch', credits: 1n }),
      usageEvent({ eventId: 'short' }),
      usageEvent({ accountId: '' }),
      usageEvent({ operation: 'Batch.$inc' }),
      usageEvent({ occurredAt: 'yesterday' }),
      usageEvent({ credits: -1 }),
    ];
    for (const e of bad) await expect(ledger.record(e)).rejects.toBeInstanceOf(InvalidUsageEventError);
    await expect(ledger.usage('acc-1', '2026-3-1', '2026-03-31')).rejects.toBeInstanceOf(
      InvalidUsageEventError,
    );
    expect(await ledger.ledgerTotal('acc-1')).toEqual({ credits: 0, entries: 0 });
  });
});
