import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, createInMemoryDocumentStore } from '@subx/ports';
import type { DocumentStore } from '@subx/ports';
import { createRequestCounts } from './request-counts.ts';
import type { RequestCounts } from './request-counts.ts';
import { InvalidUsageEventError } from './usage-ledger.ts';
import { requestReport } from '../../test/ledger-support.ts';

const day = async (counts: RequestCounts, account = 'acc-1', date = '2026-03-10') =>
  Object.fromEntries((await counts.days(account, date, date)).get(date) ?? []);

describe('request counts (in-memory store)', () => {
  let store: DocumentStore;
  let counts: RequestCounts;
  const gatewayA = randomUUID();
  const gatewayB = randomUUID();

  beforeEach(async () => {
    store = createInMemoryDocumentStore();
    counts = await createRequestCounts(store, new ManualClock(Date.UTC(2026, 2, 10, 12)));
  });

  it('keeps the latest cumulative report per source and sums the sources', async () => {
    expect(await counts.apply(requestReport({ source: gatewayA, sequence: 1, ops: { extract: 3 } }))).toBe(
      'applied',
    );
    await counts.apply(requestReport({ source: gatewayA, sequence: 2, ops: { extract: 5, batch: 1 } }));
    await counts.apply(requestReport({ source: gatewayB, sequence: 1, ops: { extract: 2 } }));
    expect(await day(counts)).toEqual({ extract: 7, batch: 1 });
  });

  it('the same report twice counts once', async () => {
    const report = requestReport({ source: gatewayA, sequence: 4, ops: { extract: 9 } });
    expect(await counts.apply(report)).toBe('applied');
    expect(await counts.apply(report)).toBe('stale');
    // Re-published after a relay crash: the same content under a new event id changes nothing either.
    expect(await counts.apply({ ...report, envelope: { ...report.envelope!, eventId: randomUUID() } })).toBe(
      'stale',
    );
    expect(await day(counts)).toEqual({ extract: 9 });
  });

  it('an older report arriving after a newer one is ignored (out of order)', async () => {
    await counts.apply(requestReport({ source: gatewayA, sequence: 7, ops: { extract: 10, comments: 2 } }));
    expect(await counts.apply(requestReport({ source: gatewayA, sequence: 6, ops: { extract: 9 } }))).toBe(
      'stale',
    );
    expect(await counts.apply(requestReport({ source: gatewayA, sequence: 1, ops: { extract: 1 } }))).toBe(
      'stale',
    );
    expect(await day(counts)).toEqual({ extract: 10, comments: 2 });
  });

  it('a lower count in a newer report wins (a refund after a 5xx)', async () => {
    await counts.apply(requestReport({ source: gatewayA, sequence: 1, ops: { summarize: 2 } }));
    await counts.apply(requestReport({ source: gatewayA, sequence: 2, ops: { summarize: 1 } }));
    expect(await day(counts)).toEqual({ summarize: 1 });
  });

  it('concurrent deliveries of one source, in any order, end at its newest report', async () => {
    const reports = Array.from({ length: 20 }, (_, i) =>
      requestReport({ source: gatewayA, sequence: i + 1, ops: { extract: (i + 1) * 2 } }),
    );
    const shuffled = [...reports, ...reports].sort(() => Math.random() - 0.5);
    await Promise.all(shuffled.map((r) => counts.apply(r)));
    expect(await day(counts)).toEqual({ extract: 40 });
  });

  it('keeps accounts and days apart, and lists only days with requests in the range', async () => {
    await counts.apply(requestReport({ source: gatewayA, sequence: 1, ops: { extract: 1 } }));
    await counts.apply(
      requestReport({ source: gatewayA, sequence: 1, date: '2026-03-11', ops: { extract: 4 } }),
    );
    await counts.apply(
      requestReport({ source: gatewayB, sequence: 1, accountId: 'acc-2', ops: { extract: 8 } }),
    );
    await counts.apply(
      requestReport({ source: gatewayB, sequence: 1, date: '2026-03-12', ops: { extract: 0 } }),
    );
    const range = await counts.days('acc-1', '2026-03-01', '2026-03-31');
    expect([...range.keys()]).toEqual(['2026-03-10', '2026-03-11']);
    expect(Object.fromEntries(range.get('2026-03-11')!)).toEqual({ extract: 4 });
    expect(await day(counts, 'acc-2')).toEqual({ extract: 8 });
  });

  it('rejects malformed reports as invalid (dead-lettered by the consumer)', async () => {
    const bad = [
      { ...requestReport({ sequence: 1, ops: {} }), envelope: undefined },
      requestReport({ sequence: 1, ops: {}, accountId: '' }),
      requestReport({ sequence: 1, ops: {}, date: '10.03.2026' }),
      requestReport({ sequence: 1, ops: {}, source: 'a.b$c' }),
      requestReport({ sequence: 0, ops: {} }),
      requestReport({ sequence: 1, ops: { 'DROP TABLE': 1 } }),
      requestReport({ sequence: 1, ops: { extract: -1 } }),
    ];
    for (const report of bad)
      await expect(counts.apply(report)).rejects.toBeInstanceOf(InvalidUsageEventError);
    expect(await counts.days('acc-1', '2026-03-01', '2026-03-31')).toEqual(new Map());
  });
});
