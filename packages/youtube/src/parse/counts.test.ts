import { describe, expect, it } from 'vitest';
import { parseCount, parseRelativeTime } from './counts.ts';

describe('parseCount', () => {
  it.each([
    ['1.2K', 1200],
    ['9.8k', 9800],
    ['567K', 567000],
    ['2.3M', 2300000],
    ['1B', 1000000000],
    ['21,051 Comments', 21051],
    ['19.783 Kommentare', 19783],
    ['like this video along with 8,205 other people', 8205],
    ['200K likes', 200000],
    ['477', 477],
    ['', 0],
    ['No comments', 0],
  ])('%s → %d', (input, n) => {
    expect(parseCount(input)).toBe(n);
  });
  it('undefined for text without a number', () => {
    expect(parseCount('Comments')).toBeUndefined();
    expect(parseCount(undefined)).toBeUndefined();
  });
});

describe('parseRelativeTime (injected now)', () => {
  const now = Date.UTC(2026, 5, 1, 12, 0, 0);
  const s = Math.floor(now / 1000);
  it.each([
    ['2 seconds ago', s - 2],
    ['5 minutes ago', s - 300],
    ['1 hour ago', s - 3600],
    ['3 days ago', s - 3 * 86400],
    ['3 days ago (edited)', s - 3 * 86400],
    ['2 weeks ago', s - 14 * 86400],
    ['1 month ago', s - 30 * 86400],
    ['2 years ago', s - 2 * 365 * 86400],
    ['5d ago', s - 5 * 86400],
    ['1mo ago', s - 30 * 86400],
    ['3wk ago', s - 21 * 86400],
    ['8 yr ago', s - 8 * 365 * 86400],
    ['10 min ago', s - 600],
    ['just now', s],
    ['yesterday', s - 86400],
  ])('%s', (input, expected) => {
    expect(parseRelativeTime(input, now)).toBe(expected);
  });
});
