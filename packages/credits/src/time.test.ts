import { describe, expect, it } from 'vitest';
import { nextUtcMidnight, utcDate } from './time.ts';

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

describe('nextUtcMidnight', () => {
  it('is the next 00:00 UTC, as the calendar says, across months, years, a leap day and before 1970', () => {
    const calendar = (ms: number) => {
      const d = new Date(ms);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
    };
    const instants = [
      Date.UTC(2026, 10, 25),
      Date.UTC(2026, 10, 25) - 1,
      Date.UTC(2026, 11, 31, 23, 59, 59, 999),
      Date.UTC(2028, 1, 29, 12),
      Date.UTC(1969, 11, 31, 6),
      0,
      -1,
    ];
    for (let ms = Date.UTC(2026, 0, 1); ms < Date.UTC(2027, 0, 1); ms += 7_777_777) instants.push(ms);
    for (const ms of instants) expect(nextUtcMidnight(ms), new Date(ms).toISOString()).toBe(calendar(ms));
  });
});
