/**
 * How long a retry waits: exponential backoff with a cap and jitter, the one rule every retry loop
 * here follows (the model: nice-grpc's retry middleware). The n-th retry (1, 2, ...) waits up to
 * `baseMs` × 2^(n-1), never more than `maxMs`. Jitter spreads the retries of many callers that
 * failed together, so that they do not come back together:
 * - `equal` (the default, nice-grpc's): uniform in the upper half of that bound, so a retry never
 *   comes much sooner than the schedule says;
 * - `full`: uniform between 0 and the bound (the most spread; for callers that can retry at once);
 * - `none`: the bound itself (schedules a test or a protocol pins).
 */
export interface Backoff {
  baseMs: number;
  maxMs: number;
  jitter?: 'equal' | 'full' | 'none';
}

export function backoffDelay(backoff: Backoff, retry: number, random: () => number = Math.random): number {
  // 2^30 ms is weeks: past it the cap has long taken over, and the power stays a finite number.
  const bound = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(Math.max(retry - 1, 0), 30));
  switch (backoff.jitter ?? 'equal') {
    case 'none':
      return bound;
    case 'full':
      return Math.floor(random() * bound);
    case 'equal':
      return Math.round((bound * (1 + random())) / 2);
  }
}
