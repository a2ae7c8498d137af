import { describe, expect, it } from 'vitest';
import { MAX_DELIVERY_ATTEMPTS, RETRY_DELAYS_MS, nextRetryDelayMs } from './schedule.ts';

describe('the retry schedule', () => {
  it('keeps trying for more than 24 hours, each wait longer than the last (or equal)', () => {
    const total = RETRY_DELAYS_MS.reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(24 * 3_600_000);
    expect(total).toBeLessThan(30 * 3_600_000);
    for (let i = 1; i < RETRY_DELAYS_MS.length; i++) {
      expect(RETRY_DELAYS_MS[i]).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[i - 1]!);
    }
    expect(MAX_DELIVERY_ATTEMPTS).toBe(8);
  });

  it('gives the next delay, none after the last attempt, and jitter of at most 10%', () => {
    expect(nextRetryDelayMs(1)).toBe(5_000);
    expect(nextRetryDelayMs(2)).toBe(300_000);
    expect(nextRetryDelayMs(MAX_DELIVERY_ATTEMPTS - 1)).toBe(36_000_000);
    expect(nextRetryDelayMs(MAX_DELIVERY_ATTEMPTS)).toBeNull();
    expect(nextRetryDelayMs(1, 1)).toBe(5_500);
    expect(nextRetryDelayMs(1, 7)).toBe(5_500);
    expect(() => nextRetryDelayMs(0)).toThrow(RangeError);
  });
});
