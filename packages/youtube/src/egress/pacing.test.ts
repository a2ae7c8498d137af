import { describe, expect, it } from 'vitest';
import { virtualTime } from '../../test/virtual-time.ts';
import { EgressPacer, PacingWaitTooLongError } from './pacing.ts';

describe('EgressPacer', () => {
  it('lets a burst through, then spaces requests at the rate', async () => {
    const t = virtualTime();
    const pacer = new EgressPacer({ count: 1, perMinute: 60, burst: 3, maxWaitMs: 60_000, ...t });
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) waits.push(await pacer.acquire(0));
    expect(waits.map(Math.round)).toEqual([0, 0, 0, 1_000, 1_000, 1_000]);
  });

  it('refills while quiet, up to the burst and no more', async () => {
    const t = virtualTime();
    const pacer = new EgressPacer({ count: 1, perMinute: 60, burst: 2, maxWaitMs: 60_000, ...t });
    await pacer.acquire(0);
    await pacer.acquire(0);
    t.advance(3_600_000);
    expect(pacer.available()).toEqual([2]);
    expect(await pacer.acquire(0)).toBe(0);
    expect(await pacer.acquire(0)).toBe(0);
    expect(Math.round(await pacer.acquire(0))).toBe(1_000);
  });

  it('keeps each egress to its own bucket', async () => {
    const t = virtualTime();
    const pacer = new EgressPacer({ count: 2, perMinute: 60, burst: 1, maxWaitMs: 60_000, ...t });
    expect(await pacer.acquire(0)).toBe(0);
    expect(await pacer.acquire(1)).toBe(0);
    expect(Math.round(await pacer.acquire(0))).toBe(1_000);
  });

  it('charges costly requests (translated tracks) more', async () => {
    const t = virtualTime();
    const pacer = new EgressPacer({ count: 1, perMinute: 60, burst: 4, maxWaitMs: 60_000, ...t });
    expect(await pacer.acquire(0, 4)).toBe(0);
    expect(Math.round(await pacer.acquire(0, 4))).toBe(4_000);
    // a cost above the bucket's size waits for a full bucket, not forever
    expect(Math.round(await pacer.acquire(0, 100))).toBe(4_000);
  });

  it('serves concurrent waiters in arrival order, each a slot later', async () => {
    let now = 0;
    const pacer = new EgressPacer({
      count: 1,
      perMinute: 600,
      burst: 1,
      maxWaitMs: 60_000,
      clock: { now: () => now },
      sleep: async () => undefined,
    });
    const waits = await Promise.all([0, 1, 2, 3].map(() => pacer.acquire(0)));
    expect(waits.map(Math.round)).toEqual([0, 100, 200, 300]);
    now += 300;
    expect(Math.round(await pacer.acquire(0))).toBe(100);
  });

  it('refuses, taking nothing, a request that would wait past the bound', async () => {
    const t = virtualTime();
    const pacer = new EgressPacer({ count: 1, perMinute: 6, burst: 1, maxWaitMs: 5_000, ...t });
    await pacer.acquire(0);
    const refused = await pacer.acquire(0).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PacingWaitTooLongError);
    expect(Math.round((refused as PacingWaitTooLongError).waitMs)).toBe(10_000);
    // nothing was taken: after the refill the next request goes straight through
    t.advance(10_000);
    expect(await pacer.acquire(0)).toBe(0);
  });

  it('refuses a rate that is not positive', () => {
    expect(() => new EgressPacer({ count: 1, perMinute: 0, burst: 1, maxWaitMs: 0 })).toThrow(RangeError);
  });

  it('shares a bucket per egress key across pacers of the process (real time only)', async () => {
    const key = `http://127.0.0.1:1|direct|${Math.random()}`;
    const options = { count: 1, perMinute: 6, burst: 1, maxWaitMs: 0, sharedKeys: [key] };
    const first = new EgressPacer(options);
    const second = new EgressPacer(options);
    expect(await first.acquire(0)).toBe(0);
    // the other pacer (another client of the same address) finds the budget spent
    await expect(second.acquire(0)).rejects.toBeInstanceOf(PacingWaitTooLongError);
    const isolated = new EgressPacer({ ...options, sharedKeys: [`${key}-other`] });
    expect(await isolated.acquire(0)).toBe(0);
  });
});
