import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PRICING,
  commentsAnalyzePrice,
  commentsPrice,
  extractPrice,
  itemsPrice,
  summarizeMaxPrice,
  summarizePrice,
  tierAllows,
} from './pricing.ts';

describe('pricing table', () => {
  it('holds the documented daily limits and monthly allowances', () => {
    expect(DEFAULT_PRICING.dailyLimit).toEqual({
      free: 100,
      pro: 10_000,
      business: 50_000,
      enterprise: null,
    });
    expect(DEFAULT_PRICING.monthlyAllowance).toEqual({
      free: 50,
      pro: 5_000,
      business: 25_000,
      enterprise: 100_000,
    });
  });

  it('requires pro or higher for summarize, comments and comments_analyze only', () => {
    for (const op of ['summarize', 'comments', 'comments_analyze'] as const) {
      expect(DEFAULT_PRICING.minimumTier[op]).toBe('pro');
    }
    for (const op of ['extract', 'batch', 'playlist'] as const)
      expect(DEFAULT_PRICING.minimumTier[op]).toBe('free');
    expect(tierAllows('free', 'pro')).toBe(false);
    expect(tierAllows('pro', 'pro')).toBe(true);
    expect(tierAllows('business', 'pro')).toBe(true);
    expect(tierAllows('enterprise', 'pro')).toBe(true);
    expect(tierAllows('pro', 'business')).toBe(false);
  });

  it('prices extract, batch and playlist', () => {
    expect(extractPrice()).toBe(0);
    expect(itemsPrice(0)).toBe(0);
    expect(itemsPrice(7)).toBe(7);
  });

  it('prices summarize by duration at the 600 s and 1800 s boundaries', () => {
    expect(summarizePrice(1)).toBe(2);
    expect(summarizePrice(600)).toBe(2);
    expect(summarizePrice(601)).toBe(4);
    expect(summarizePrice(1800)).toBe(4);
    expect(summarizePrice(1801)).toBe(6);
    expect(summarizePrice(36_000)).toBe(6);
    expect(summarizeMaxPrice()).toBe(6);
  });

  it('prices comments per started 500, free when cached or disabled', () => {
    expect(commentsPrice(1)).toBe(1);
    expect(commentsPrice(500)).toBe(1);
    expect(commentsPrice(501)).toBe(2);
    expect(commentsPrice(2000)).toBe(4);
    expect(commentsPrice(0)).toBe(0);
    expect(commentsPrice(800, { cached: true })).toBe(0);
    expect(commentsPrice(800, { disabled: true })).toBe(0);
  });

  it('prices comment analysis 3, 0 when cached', () => {
    expect(commentsAnalyzePrice()).toBe(3);
    expect(commentsAnalyzePrice({ cached: true })).toBe(0);
  });

  it('reads prices from the table it is given', () => {
    const custom = structuredClone(DEFAULT_PRICING);
    custom.prices.commentsAnalyze = 5;
    custom.prices.summarize = [{ upToSeconds: null, credits: 9 }];
    expect(commentsAnalyzePrice({}, custom)).toBe(5);
    expect(summarizePrice(10, custom)).toBe(9);
  });
});
