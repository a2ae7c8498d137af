/**
 * The daily request limit of each tier: a counter per account and UTC day in the key-value store
 * (Redis), rebuilt from the durable record (daily-requests.ts) when Redis lost it. The gateway
 * counts every admitted call with it, the job service every scheduled watch run.
 */
import type { Clock, KeyValueStore } from '@subx/ports';
import type { DailyRequestLog } from './daily-requests.ts';
import type { AccessPricing } from './pricing.ts';
import { DAY_MS, nextUtcMidnight, utcDate } from './time.ts';
import type { Account, Operation, RateLimitState } from './types.ts';
import { dailyCounterKey } from './usage-keys.ts';

export interface Consumed {
  admitted: boolean;
  state: RateLimitState;
  /** Un-counts the request (5xx). Idempotent; a no-op when not admitted. */
  refund(): Promise<void>;
}

export interface DailyRateLimiter {
  /**
   * Counts the request. The answer itself when the store counts in this process and nothing else
   * has to be read (KeyValueStore.inProcess), else a promise; it never throws (a failure rejects).
   */
  consume(account: Account, operation: Operation): Consumed | Promise<Consumed>;
  /** The state without counting (for responses that must not count, such as 403). */
  peek(account: Account): Promise<RateLimitState>;
  /** Requests counted today (UTC). */
  todayCount(accountId: string): Promise<number>;
}

export function createDailyRateLimiter(deps: {
  kv: KeyValueStore;
  clock: Clock;
  pricing: AccessPricing;
  /** The durable record of counted requests; absent: counts live in the KeyValueStore only. */
  requestLog?: DailyRequestLog;
}): DailyRateLimiter {
  const { kv, clock, pricing, requestLog } = deps;

  async function count(accountId: string, now: number): Promise<number> {
    const date = utcDate(now);
    const raw = await kv.get(dailyCounterKey(accountId, date));
    // No counter (a new day, or Redis lost it): the durable record knows.
    if (raw === null) {
      return requestLog
        ? await requestLog.day(accountId, date).then(
            (d) => d.count,
            () => 0,
          )
        : 0;
    }
    const n = Number(raw);
    return Number.isFinite(n) && n > 0 ? n : 0;
  }

  /**
   * The counter just went from nothing to 1: a new day, or Redis lost it (restart, eviction).
   * Adds what the durable record counted today, so a restart does not hand out the day's requests
   * again. Returns the counter's value afterwards. Only what was flushed counts (up to 1 s of one
   * replica's requests may be missing), and requests racing the rebuild may each be let in before
   * it lands: at most the concurrency of that moment, once.
   */
  async function rebuild(key: string, accountId: string, date: string, expireAtMs: number) {
    // The document store unreachable: count on from the live counter rather than fail the request.
    const durable = requestLog ? await requestLog.durableCount(accountId, date).catch(() => 0) : 0;
    return durable > 0 ? kv.increment(key, durable, { expireAtMs }) : 1;
  }

  return {
    consume(account, operation) {
      const now = clock.now();
      const date = utcDate(now);
      const resetAtMs = nextUtcMidnight(now);
      const limit = pricing.dailyLimit[account.tier];
      const key = dailyCounterKey(account.id, date);
      // The counter outlives its day a little so a refund right after midnight still lands.
      const expireAtMs = resetAtMs + DAY_MS;
      const refused = (): Consumed => ({
        admitted: false,
        state: { limit: limit ?? 0, remaining: 0, resetAtMs },
        refund: async () => {},
      });
      const admitted = (value: number): Consumed => {
        requestLog?.record(account.id, date, operation, 1);
        let refunded = false;
        return {
          admitted: true,
          state: { limit, remaining: limit === null ? null : Math.max(0, limit - value), resetAtMs },
          async refund() {
            if (refunded) return;
            refunded = true;
            requestLog?.record(account.id, date, operation, -1);
            await kv.increment(key, -1, { expireAtMs });
          },
        };
      };
      /** The count after this request's step; a first one (1) is rebuilt from the durable record. */
      const counted = (value: number): Consumed | Promise<Consumed> => {
        if (value !== 1) return admitted(value);
        return rebuild(key, account.id, date, expireAtMs).then(async (rebuilt) => {
          if (limit !== null && rebuilt > limit) {
            // The rebuilt count says the day's requests were already used.
            await kv.increment(key, -1, { expireAtMs });
            return refused();
          }
          return admitted(rebuilt);
        });
      };
      /** incrementWithin's answer: refused when the step would cross the limit. */
      const stepped = (result: { applied: boolean; value: number }) =>
        result.applied ? counted(result.value) : refused();
      // A store in this process counts at once: the admission of a request waits for nothing.
      const counters = kv.inProcess;
      if (counters) {
        try {
          if (limit === null) return counted(counters.increment(key, 1, { expireAtMs }));
          return stepped(counters.incrementWithin(key, 1, limit, { expireAtMs }));
        } catch (error) {
          return Promise.reject(error);
        }
      }
      if (limit === null) return kv.increment(key, 1, { expireAtMs }).then(counted);
      return kv.incrementWithin(key, 1, limit, { expireAtMs }).then(stepped);
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
