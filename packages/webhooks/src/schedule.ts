/**
 * When a failed delivery is tried again: the schedule Svix publishes for Standard Webhooks
 * (immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), so the last attempt comes about 27.6 h
 * after the first, past the 24 hours receivers are promised. Delays are from the previous attempt.
 */
export const RETRY_DELAYS_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

/** Attempts in all: the first plus one per delay. */
export const MAX_DELIVERY_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/**
 * The delay before attempt `attempt + 1` after attempt `attempt` (1-based) failed, or null when
 * that was the last. `jitter` (0..1, default none) spreads retries of many failed deliveries up to
 * 10% later, so a receiver back from an outage is not hit by all of them in the same second.
 */
export function nextRetryDelayMs(attempt: number, jitter = 0): number | null {
  if (!Number.isInteger(attempt) || attempt < 1)
    throw new RangeError(`attempt must be 1 or more, got ${attempt}`);
  const base = RETRY_DELAYS_MS[attempt - 1];
  if (base === undefined) return null;
  return Math.round(base * (1 + 0.1 * Math.min(Math.max(jitter, 0), 1)));
}
