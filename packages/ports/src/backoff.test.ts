import { describe, expect, it } from 'vitest';
import { backoffDelay } from './backoff.ts';

describe('backoffDelay', () => {
  it('doubles from the base per retry and stops at the cap', () => {
    const plain = { baseMs: 100, maxMs: 1_000, jitter: 'none' } as const;
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(plain, n))).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    expect(backoffDelay(plain, 10_000)).toBe(1_000);
    expect(backoffDelay(plain, 0)).toBe(100);
  });

  it('equal jitter (the default) stays in the upper half of the bound', () => {
    const backoff = { baseMs: 100, maxMs: 1_000 };
    expect(backoffDelay(backoff, 3, () => 0)).toBe(200);
    expect(backoffDelay(backoff, 3, () => 0.999_999)).toBe(400);
    for (let i = 0; i < 200; i++) {
      const delay = backoffDelay(backoff, 5);
      expect(delay).toBeGreaterThanOrEqual(500);
      expect(delay).toBeLessThanOrEqual(1_000);
    }
  });

  it('full jitter draws anywhere below the bound', () => {
    const backoff = { baseMs: 100, maxMs: 1_000, jitter: 'full' } as const;
    expect(backoffDelay(backoff, 4, () => 0)).toBe(0);
    expect(backoffDelay(backoff, 4, () => 0.5)).toBe(400);
    expect(backoffDelay(backoff, 4, () => 0.999_999)).toBe(799);
  });
});
