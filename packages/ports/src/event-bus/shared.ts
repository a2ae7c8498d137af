/** Redelivery backoff after a failed handler: `initialMs`, doubling per attempt, capped at `maxMs`. */
export interface RetryBackoff {
  initialMs?: number;
  maxMs?: number;
}

export function backoffDelay(backoff: Required<RetryBackoff>, attempt: number): number {
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(attempt - 1, 20));
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
