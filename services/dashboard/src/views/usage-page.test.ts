import { describe, expect, it } from 'vitest';
import type { AccountLimits, AccountUsage } from '../gateway/client.ts';
import { usagePage } from './pages.ts';

const ctx = {
  csrf: 'csrf',
  viewer: { email: 'a@example.com', verified: true, operator: false, role: null },
  path: '/usage',
};
const text = (page: string) =>
  page
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

function page(used: number, limit: number | null, requests: number, credits: number): string {
  const limits: AccountLimits = {
    account_id: 'acct_1',
    tier: limit === null ? 'enterprise' : 'free',
    daily: { limit, used, remaining: limit === null ? null : limit - used, reset_at: '2026-03-16T00:00:00Z' },
    credits: { balance: 49, monthly_allowance: 50 },
    operations: {},
  };
  const day = { date: '2026-03-15', requests, credits, operations: { extract: { requests, credits } } };
  const usage: AccountUsage = {
    account_id: 'acct_1',
    from: '2026-03-15',
    to: '2026-03-15',
    days: [day],
    total_requests: requests,
    total_credits: credits,
  };
  return text(usagePage(ctx, { limits, usage }));
}

describe('usage page counts', () => {
  it('says "1 request, 1 credit" for one of each, in the totals and the charts', () => {
    const one = page(1, 100, 1, 1);
    expect(one).toContain('1 request, 1 credit.');
    expect(one).toContain('1 request from 2026-03-15 to 2026-03-15');
    expect(one).toContain('1 credit from 2026-03-15 to 2026-03-15');
    expect(one).toContain('1 / 100 requests');
    expect(one).not.toMatch(/\b1 (requests|credits)\b/);
  });

  it('keeps the plural for other counts, and today without a limit reads as a count', () => {
    expect(page(0, null, 0, 2)).toContain('0 requests, 2 credits.');
    expect(page(1, null, 1, 0)).toMatch(/Today 1 request Unlimited tier/);
  });
});
