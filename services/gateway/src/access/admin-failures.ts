/**
 * Failed admin-token attempts, limited per caller (an IPv4 address or an IPv6 /64): after
 * `maxFailures` wrong or missing tokens within `windowMs`, the caller gets 429 with Retry-After
 * until the window ends, before its token is even compared.
 *
 * An attempt is counted when it starts and given back when it turns out to be authorized, so a
 * concurrent burst gets no more than `maxFailures` comparisons either (a check after the compare
 * would let every request of the burst through before the first failure is written).
 *
 * The count lives in this process: the admin listener is reached by the dashboard alone (loopback,
 * or the chart's NetworkPolicy), and with replicas a guesser gets `maxFailures` per replica and
 * window against a token of at least 32 characters. Bounded at `maxCallers` entries.
 */
import type { Clock } from '@subx/ports';
import { systemClock } from '@subx/ports';
import { ipBucket } from '@subx/service-kit';

export interface AdminFailureLimiter {
  /**
   * Counts one attempt from `ip`. Returns null when it may go ahead, or the seconds to wait when
   * the caller has used up its failures.
   */
  begin(ip: string): number | null;
  /** The attempt was authorized: it does not count. */
  succeeded(ip: string): void;
}

export interface AdminFailureLimiterOptions {
  maxFailures?: number;
  windowMs?: number;
  maxCallers?: number;
  clock?: Clock;
}

const DEFAULT_ADMIN_MAX_FAILURES = 5;
const DEFAULT_ADMIN_FAILURE_WINDOW_MS = 60_000;

export function createAdminFailureLimiter(options: AdminFailureLimiterOptions = {}): AdminFailureLimiter {
  const maxFailures = options.maxFailures ?? DEFAULT_ADMIN_MAX_FAILURES;
  const windowMs = options.windowMs ?? DEFAULT_ADMIN_FAILURE_WINDOW_MS;
  const maxCallers = options.maxCallers ?? 10_000;
  const clock = options.clock ?? systemClock;
  const callers = new Map<string, { attempts: number; windowEndMs: number }>();

  function makeRoom(now: number): void {
    for (const [key, entry] of callers) if (entry.windowEndMs <= now) callers.delete(key);
    // Still full of live windows: the oldest caller is forgotten (Map keeps insertion order).
    while (callers.size >= maxCallers) callers.delete(callers.keys().next().value!);
  }

  return {
    begin(ip) {
      const now = clock.now();
      const key = ipBucket(ip);
      let entry = callers.get(key);
      if (entry && entry.windowEndMs <= now) {
        callers.delete(key);
        entry = undefined;
      }
      if (!entry) {
        if (callers.size >= maxCallers) makeRoom(now);
        entry = { attempts: 0, windowEndMs: now + windowMs };
        callers.set(key, entry);
      }
      if (entry.attempts >= maxFailures) return Math.max(1, Math.ceil((entry.windowEndMs - now) / 1000));
      entry.attempts += 1;
      return null;
    },
    succeeded(ip) {
      const entry = callers.get(ipBucket(ip));
      if (entry && entry.attempts > 0) entry.attempts -= 1;
    },
  };
}
