import { describe, expect, it } from 'vitest';
import { median } from './extract-load.ts';

describe('median (the benchmark table of rounds)', () => {
  it('is the middle round of an odd number of them', () => {
    expect(median([31.5, 26.1, 33.8])).toBe(31.5);
  });

  it('is the mean of the two middle rounds of an even number, not the larger', () => {
    expect(median([36.3, 31.9])).toBeCloseTo(34.1, 10);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it('is 0 without rounds, and leaves its input as it was', () => {
    expect(median([])).toBe(0);
    const rounds = [3, 1, 2, 4];
    median(rounds);
    expect(rounds).toEqual([3, 1, 2, 4]);
  });
});
