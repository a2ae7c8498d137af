/**
 * Daily request limits (per account, reset 00:00 UTC) and the per-IP limit of the open routes,
 * both as counters in the KeyValueStore. `incrementWithin` makes the check-and-count one atomic
 * step across every replica, so a limit of 100 admits exactly 100 however the requests race.
 */
import { Errors } from '@subx/errors';
import type { AppError } from '@subx/errors';
import type { Clock, KeyValueStore } from '@subx/ports';
import type { Account, Operation, RateLimitState } from './types.ts';
import type { AccessPricing } from './pricing.ts';
import { DAY_MS, nextUtcMidnight, utcDate } from './time.ts';
import { isStoreUnavailable } from './store-guard.ts';

/** Per-operation request counters are kept this long for the embedded usage report. */
export const USAGE_RETENTION_MS = 400 * DAY_MS;

export const dailyCounterKey = (accountId: string, date: string) => `rl:day:${accountId}:${date}`;
export const usageRequestsKey = (accountId: string, date: string, operation: string) =>
  `usage:req:${accountId}:${date}:${operation}`;

export interface Consumed {
  admitted: boolean;
  state: RateLimitState;
  /** Un-counts the request (5xx). Idempotent; a no-op when not admitted. */
  refund(): Promise<void>;
}

export interface DailyRateLimiter {
  consume(account: Account, operation: Operation): Promise<Consumed>;
  /** The state without counting (for responses that must not count, such as 403). */
  peek(account: Account): Promise<RateLimitState>;
  /** Requests counted today (UTC). */
  todayCount(accountId: string): Promise<number>;
}

export function createDailyRateLimiter(deps: {
  kv: KeyValueStore;
  clock: Clock;
  pricing: AccessPricing;
}): DailyRateLimiter {
  const { kv, clock, pricing } = deps;

  async function count(accountId: string, now: number): Promise<number> {
    const raw = await kv.get(dailyCounterKey(accountId, utcDate(now)));
    const n = raw === null ? 0 : Number(raw);
    return Number.isFinite(n) && n > 0 ? n : 0;
  }

  return {
    async consume(account, operation) {
      const now = clock.now();
      const date = utcDate(now);
      const resetAtMs = nextUtcMidnight(now);
      const limit = pricing.dailyLimit[account.tier];
      const key = dailyCounterKey(account.id, date);
      // The counter outlives its day a little so a refund right after midnight still lands.
      const expireAtMs = resetAtMs + DAY_MS;
      let value: number;
      if (limit === null) {
        value = await kv.increment(key, 1, { expireAtMs });
      } else {
        const result = await kv.incrementWithin(key, 1, limit, { expireAtMs });
        if (!result.applied) {
          return {
            admitted: false,
            state: { limit, remaining: 0, resetAtMs },
            refund: async () => {},
          };
        }
        value = result.value;
      }
      const usageKey = usageRequestsKey(account.id, date, operation);
      await kv.increment(usageKey, 1, { expireAtMs: now + USAGE_RETENTION_MS });
      let refunded = false;
      return {
        admitted: true,
        state: { limit, remaining: limit === null ? null : Math.max(0, limit - value), resetAtMs },
        async refund() {
          if (refunded) return;
          refunded = true;
          await Promise.all([kv.increment(key, -1, { expireAtMs }), kv.increment(usageKey, -1)]);
        },
      };
    },

    async peek(account) {
      const now = clock.now();
      const limit = pricing.dailyLimit[account.tier];
      const resetAtMs = nextUtcMidnight(now);
      if (limit === null) return { limit: null, remaining: null, resetAtMs };
      const used = await count(account.id, now);
      return { limit, remaining: Math.max(0, limit - used), resetAtMs };
    },

    todayCount(accountId) {
      return count(accountId, clock.now());
    },
  };
}

/** X-RateLimit-* headers; none for unlimited tiers (decisions.md "Rate-limit reporting"). */
export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  if (state.limit === null || state.remaining === null) return {};
  return {
    'X-RateLimit-Limit': String(state.limit),
    'X-RateLimit-Remaining': String(state.remaining),
    'X-RateLimit-Reset': new Date(state.resetAtMs).toISOString(),
  };
}

/** The `rate_limit` body object with both reset forms. */
export function rateLimitBody(state: RateLimitState): {
  limit: number | null;
  remaining: number | null;
  reset: number;
  reset_at: string;
} {
  return {
    limit: state.limit,
    remaining: state.remaining,
    reset: Math.floor(state.resetAtMs / 1000),
    reset_at: new Date(state.resetAtMs).toISOString(),
  };
}

/** Whole seconds until `resetAtMs`, at least 1 (the Retry-After value). */
export function secondsUntil(resetAtMs: number, now: number): number {
  return Math.max(1, Math.ceil((resetAtMs - now) / 1000));
}

// The state rides along the error out of band, so it never lands in the public error body
// (toPublicErrorBody spreads `details`); routes read it with rateLimitOf to send the headers.
const attached = new WeakMap<object, RateLimitState>();

export function attachRateLimit<E extends object>(error: E, state: RateLimitState): E {
  attached.set(error, state);
  return error;
}

/** The rate-limit state of a TIER_REQUIRED / RATE_LIMITED error from `admit`, if any. */
export function rateLimitOf(error: unknown): RateLimitState | undefined {
  return typeof error === 'object' && error !== null ? attached.get(error) : undefined;
}

export interface IpRateLimiter {
  /** Counts one request from `ip`; throws RATE_LIMITED (with Retry-After) over the limit. */
  check(ip: string): Promise<void>;
}

/**
 * Fixed one-minute windows per client IP for /api/v1/validate and /health. When the shared store
 * cannot answer, the window is counted in this process instead (`fallback`, in memory): the open
 * routes keep working with a per-replica limit rather than failing with the store.
 */
export function createIpRateLimiter(deps: {
  kv: KeyValueStore;
  clock: Clock;
  limitPerMinute?: number;
  fallback?: KeyValueStore;
}): IpRateLimiter {
  const { kv, clock, fallback } = deps;
  const limit = deps.limitPerMinute ?? 60;
  return {
    async check(ip) {
      const now = clock.now();
      const windowStart = Math.floor(now / 60_000) * 60_000;
      const windowEnd = windowStart + 60_000;
      // Bound the key: the address comes from the socket or a proxy header.
      const id = String(ip).slice(0, 64) || 'unknown';
      const count = (store: KeyValueStore) =>
        store.incrementWithin(`rl:ip:${id}:${windowStart}`, 1, limit, { expireAtMs: windowEnd + 1_000 });
      const result = await count(kv).catch((error: unknown) => {
        if (fallback && isStoreUnavailable(error)) return count(fallback);
        throw error;
      });
      if (!result.applied) {
        const retryAfter = secondsUntil(windowEnd, now);
        throw Errors.rateLimited(
          `Too many requests from this address: the limit is ${limit} per minute. Retry in ${retryAfter} s.`,
          retryAfter,
        );
      }
    },
  };
}

export function dailyLimitError(state: RateLimitState, now: number): AppError {
  const retryAfter = secondsUntil(state.resetAtMs, now);
  return attachRateLimit(
    Errors.rateLimited(
      `Daily request limit of ${state.limit} reached; it resets at ${new Date(state.resetAtMs).toISOString()}.`,
      retryAfter,
    ),
    state,
  );
}
