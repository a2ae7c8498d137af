/**
 * Daily request limits (per account, reset 00:00 UTC) and the per-IP limit of the open routes,
 * both as counters in the KeyValueStore. `incrementWithin` makes the check-and-count one atomic
 * step across every replica, so a limit of 100 admits exactly 100 however the requests race.
 */
import { Errors } from '@subx/errors';
import type { AppError } from '@subx/errors';
import type { Clock, KeyValueStore } from '@subx/ports';
import { countRateLimitRejection, ipBucket } from '@subx/service-kit';
import type { RateLimitState } from '@subx/credits';
import { isStoreUnavailable } from './store-guard.ts';

// Every answer of a day carries the same reset time: format it once, not twice per request.
let lastReset = { ms: Number.NaN, iso: '' };
function resetIso(resetAtMs: number): string {
  if (lastReset.ms !== resetAtMs) lastReset = { ms: resetAtMs, iso: new Date(resetAtMs).toISOString() };
  return lastReset.iso;
}

/**
 * X-RateLimit-* headers; none for unlimited tiers (decisions.md "Rate-limit reporting"). The names
 * are lower-case, as fastify stores and sends them: a mixed-case name would be lower-cased into a
 * new string (and looked up as a new property key) on every counted request.
 */
export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  if (state.limit === null || state.remaining === null) return {};
  return {
    'x-ratelimit-limit': String(state.limit),
    'x-ratelimit-remaining': String(state.remaining),
    'x-ratelimit-reset': resetIso(state.resetAtMs),
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
    reset_at: resetIso(state.resetAtMs),
  };
}

/**
 * JSON.stringify(rateLimitBody(state)), written directly: the cached extract completes its kept
 * answer with it on every request (extract-cache.ts, completeJsonBody).
 */
export function rateLimitJson(state: RateLimitState): string {
  // Numbers or null (`${null}` is 'null'), and an ISO time: nothing to escape.
  return `{"limit":${state.limit},"remaining":${state.remaining},"reset":${Math.floor(state.resetAtMs / 1000)},"reset_at":"${resetIso(state.resetAtMs)}"}`;
}

/** Whole seconds until `resetAtMs`, at least 1 (the Retry-After value). */
function secondsUntil(resetAtMs: number, now: number): number {
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

export interface AccountReadLimiter {
  /** Counts one free read of `accountId`; throws RATE_LIMITED (with Retry-After) over the limit. */
  check(accountId: string): Promise<void>;
}

/**
 * Fixed one-minute windows per subject in the shared store. When the store cannot answer, the
 * window is counted in this process instead (`localFallback`): the routes keep working with a
 * per-replica limit rather than failing with the store. The local window holds at most
 * `maxLocalSubjects` subjects (a buffer with a cap); further new subjects are refused until the
 * window turns.
 */
function createMinuteWindows(deps: {
  kv: KeyValueStore;
  clock: Clock;
  limit: number;
  keyPrefix: string;
  localFallback?: boolean;
  maxLocalSubjects?: number;
  refuse: (retryAfter: number) => AppError;
}): (subject: string) => Promise<void> {
  const { kv, clock, limit } = deps;
  const maxLocal = deps.maxLocalSubjects ?? 100_000;
  let localWindow = -1;
  const local = new Map<string, number>();

  function countLocally(id: string, windowStart: number): { applied: boolean } {
    if (windowStart !== localWindow) {
      localWindow = windowStart;
      local.clear();
    }
    const used = local.get(id);
    if (used === undefined && local.size >= maxLocal) return { applied: false };
    if ((used ?? 0) >= limit) return { applied: false };
    local.set(id, (used ?? 0) + 1);
    return { applied: true };
  }

  return async (id) => {
    const now = clock.now();
    const windowStart = Math.floor(now / 60_000) * 60_000;
    const windowEnd = windowStart + 60_000;
    const result = await kv
      .incrementWithin(`${deps.keyPrefix}:${id}:${windowStart}`, 1, limit, { expireAtMs: windowEnd + 1_000 })
      .catch((error: unknown) => {
        if (deps.localFallback && isStoreUnavailable(error)) return countLocally(id, windowStart);
        throw error;
      });
    if (!result.applied) throw deps.refuse(secondsUntil(windowEnd, now));
  };
}

/** Per client IP for /api/v1/validate (/health is never limited, so probes never see 429). */
export function createIpRateLimiter(deps: {
  kv: KeyValueStore;
  clock: Clock;
  limitPerMinute?: number;
  localFallback?: boolean;
  maxLocalAddresses?: number;
}): IpRateLimiter {
  const limit = deps.limitPerMinute ?? 60;
  const count = createMinuteWindows({
    kv: deps.kv,
    clock: deps.clock,
    limit,
    keyPrefix: 'rl:ip',
    ...(deps.localFallback === undefined ? {} : { localFallback: deps.localFallback }),
    ...(deps.maxLocalAddresses === undefined ? {} : { maxLocalSubjects: deps.maxLocalAddresses }),
    refuse: (retryAfter) => {
      countRateLimitRejection('anonymous', 'per_ip_minute');
      return Errors.rateLimited(
        `Too many requests from this address: the limit is ${limit} per minute. Retry in ${retryAfter} s.`,
        retryAfter,
      );
    },
  });
  // One bucket per IPv4 address or IPv6 /64 (a host holds a whole /64); bounded in length, since
  // the address comes from the socket or a proxy header.
  return { check: (ip) => count(ipBucket(String(ip))) };
}

/**
 * Per account for the free reads (a job, its results, the webhook secret, MCP's handshake and
 * tool list): they cost no credit and count against no daily limit, so without this one key could
 * make the gateway and its stores work without end.
 */
export function createAccountReadLimiter(deps: {
  kv: KeyValueStore;
  clock: Clock;
  limitPerMinute: number;
}): AccountReadLimiter {
  const limit = deps.limitPerMinute;
  const count = createMinuteWindows({
    kv: deps.kv,
    clock: deps.clock,
    limit,
    keyPrefix: 'rl:reads',
    localFallback: true,
    refuse: (retryAfter) => {
      countRateLimitRejection('account', 'account_reads_minute');
      return Errors.rateLimited(
        `Too many reads with this key: the limit is ${limit} per minute. Retry in ${retryAfter} s.`,
        retryAfter,
      );
    },
  });
  return { check: count };
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
