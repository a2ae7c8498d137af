/**
 * The KeyValueStore keys of the usage counters, shared by their writers (the daily rate limiter,
 * the credit ledger) and their readers (the counter usage reader, the admin account view). A leaf,
 * so that none of them has to import another for a key.
 */
import { DAY_MS } from './time.ts';

/** Per-operation credit counters are kept this long for the embedded usage report. */
export const USAGE_RETENTION_MS = 400 * DAY_MS;

/** Requests counted for the account on a UTC day (the daily limit). */
export const dailyCounterKey = (accountId: string, date: string) => `rl:day:${accountId}:${date}`;

/** Credits charged to the account on a UTC day for one operation. */
export const usageCreditsKey = (accountId: string, date: string, operation: string) =>
  `usage:cred:${accountId}:${date}:${operation}`;

/** Credits charged to the account in a UTC month (`YYYY-MM`). */
export const monthCreditsKey = (accountId: string, month: string) => `usage:month-cred:${accountId}:${month}`;
