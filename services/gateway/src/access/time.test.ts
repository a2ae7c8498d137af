import { describe, expect, it } from 'vitest';
import { utcDate } from './time.ts';

const formatted = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe('utcDate', () => {
  it('gives the UTC calendar date on both sides of midnight, in any order of calls', () => {
    const midnight = Date.UTC(2026, 10, 25);
    const instants = [
      midnight,
      midnight - 1,
      midnight + 1,
      midnight + 86_399_999,
      midnight + 86_400_000,
      midnight - 86_400_000,
      0,
      -1,
      Date.UTC(2024, 1, 29, 12),
      Date.UTC(2099, 11, 31, 23, 59, 59, 999),
    ];
    // forwards, backwards and alternating: the remembered day must never leak into another day
    for (const ms of [...instants, ...instants.toReversed(), midnight - 1, midnight, midnight - 1])
      expect(utcDate(ms)).toBe(formatted(ms));
  });

  it('still refuses an invalid instant', () => {
    expect(() => utcDate(Number.NaN)).toThrow(RangeError);
  });

  it('matches Date formatting over many random instants', () => {
    let seed = 42;
    const next = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31) * 4e12;
    for (let i = 0; i < 10_000; i++) {
      const ms = Math.floor(next());
      expect(utcDate(ms)).toBe(formatted(ms));
    }
  });
});
