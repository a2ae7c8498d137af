/**
 * The store could not answer in time: not connected, over its queue bound, or a command outlived
 * its timeout. Retryable by nature; callers decide whether to degrade (skip a cache) or refuse
 * (a rate limit cannot be checked). The in-memory adapter never throws it.
 */
export class KeyValueUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KeyValueUnavailableError';
  }
}

export function isKeyValueUnavailable(error: unknown): error is KeyValueUnavailableError {
  return error instanceof KeyValueUnavailableError;
}

/**
 * The counters of a store that answers in this process (the in-memory store), as plain calls with
 * the same semantics as their asynchronous twins. A caller on a hot path (the daily counter of
 * every admitted request) counts through them without a promise and a turn of the microtask queue
 * per step. A remote store (Redis) has none: its answer has to wait for the network.
 */
export interface InProcessCounters {
  increment(key: string, by: number, options?: { expireAtMs?: number }): number;
  incrementWithin(
    key: string,
    by: number,
    limit: number,
    options?: { expireAtMs?: number },
  ): { applied: boolean; value: number };
}

/**
 * Key-value port for counters, caches and fan-out notifications.
 * Adapters: Redis (redis.ts, the only importer of ioredis) and in-memory (in-memory.ts).
 * Every operation is atomic across all processes sharing the store (Redis: Lua scripts).
 */
export interface KeyValueStore {
  get(key: string): Promise<string | null>;
  /** `ttlMs` absent: no expiry. */
  set(key: string, value: string, options?: { ttlMs?: number }): Promise<void>;
  /** SET NX: true when this call stored the value. */
  setIfAbsent(key: string, value: string, options?: { ttlMs?: number }): Promise<boolean>;
  delete(key: string): Promise<void>;
  /**
   * Deletes every key that starts with `prefix` (at least 3 characters; glob characters are
   * literal); resolves with how many were deleted. Meant for the rare sweep of one owner's keys
   * (a deleted account), not a hot path: on Redis it walks the keyspace with SCAN.
   */
  deleteByPrefix(prefix: string): Promise<number>;
  /** Remaining time to live in ms; null when the key is missing or has no expiry. */
  ttlMs(key: string): Promise<number | null>;
  /**
   * Adds `by` (may be negative) and returns the new value. `expireAtMs` (epoch ms) sets the key's
   * absolute expiry when given.
   */
  increment(key: string, by: number, options?: { expireAtMs?: number }): Promise<number>;
  /**
   * Adds `by` only if the result stays <= `limit`; otherwise leaves the value alone.
   * Returns whether it was applied and the value after the call. Used for exact rate limits.
   */
  incrementWithin(
    key: string,
    by: number,
    limit: number,
    options?: { expireAtMs?: number },
  ): Promise<{ applied: boolean; value: number }>;
  /**
   * Broadcast to every subscriber of `channel` in every process. Resolves with the number of
   * clients it was handed to (Redis's PUBLISH reply): a client is one store instance, whose
   * subscriptions share one connection, so it counts instances, not handlers. Delivery itself is
   * not awaited: a receiver that must be known to have acted has to say so (key-cache.ts).
   */
  publish(channel: string, message: string): Promise<number>;
  /** This instance as a receiver of `publish`: unique per instance, shared by its subscriptions. */
  readonly clientId: string;
  /**
   * Resolves once the subscription is active; the returned function unsubscribes.
   * `onConnection(false)`: the subscription's connection was lost, so what is published from then
   * on does not reach `handler`; `onConnection(true)`: subscribed again. A subscriber that must not
   * miss a message (a cache) stops trusting what it holds in between. The in-memory store never
   * loses it.
   */
  subscribe(
    channel: string,
    handler: (message: string) => void,
    options?: { onConnection?: (live: boolean) => void },
  ): Promise<() => Promise<void>>;
  /** Present only when the store answers in this process (InProcessCounters). */
  readonly inProcess?: InProcessCounters;
  /** Bounded like every command: rejects (KeyValueUnavailableError) when the store cannot answer. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** deleteByPrefix's argument: long enough that it can never mean "every key". */
export function checkPrefix(prefix: string): void {
  if (prefix.length < 3) throw new RangeError(`deleteByPrefix needs a prefix of 3 characters or more`);
}
