import { backoffDelay } from '../backoff.ts';

/** Redelivery backoff after a failed handler: `initialMs`, doubling per attempt, capped at `maxMs`. */
export interface RetryBackoff {
  initialMs?: number;
  maxMs?: number;
}

/**
 * The wait before redelivering a message after its `attempt`-th failure: the documented schedule
 * exactly (no jitter: the failures of one partition are retried one message at a time anyway).
 */
export function redeliveryDelay(backoff: Required<RetryBackoff>, attempt: number): number {
  return backoffDelay({ baseMs: backoff.initialMs, maxMs: backoff.maxMs, jitter: 'none' }, attempt);
}

/** 32-bit FNV-1a over the UTF-8 bytes: stable across processes and restarts. */
export function stableHash(key: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(key)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Longest `x-error-message` a dead letter carries: a handler's error text is not bounded. */
export const MAX_DEAD_LETTER_ERROR_CHARS = 2_000;

/** The failed handler's error as the dead letter's `x-error-message` header, capped. */
export function deadLetterErrorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length <= MAX_DEAD_LETTER_ERROR_CHARS
    ? message
    : `${message.slice(0, MAX_DEAD_LETTER_ERROR_CHARS - 1)}…`;
}

/**
 * With `perPartitionConcurrency` above 1: how far past the lowest unfinished message of a partition
 * a member starts messages. Bounds what a stop or crash redelivers and the bookkeeping per partition
 * while one message is slow or retrying.
 */
export const MAX_UNCOMMITTED_SPAN = 1_000;

/** The subscription's concurrency options, checked: positive integers. */
export function concurrencyOf(options: { perPartitionConcurrency?: number; maxInFlight?: number }): {
  perPartition: number;
  maxInFlight: number | undefined;
} {
  const perPartition = options.perPartitionConcurrency ?? 1;
  for (const [name, value] of [
    ['perPartitionConcurrency', perPartition],
    ['maxInFlight', options.maxInFlight ?? 1],
  ] as const) {
    if (!Number.isInteger(value) || value < 1) {
      throw new RangeError(`${name} must be a positive integer, got ${String(value)}`);
    }
  }
  return { perPartition, maxInFlight: options.maxInFlight };
}
