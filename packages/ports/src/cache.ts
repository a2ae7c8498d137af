import { isKeyValueUnavailable, type KeyValueStore } from './key-value/port.ts';

export interface JsonCache {
  /** The cached value, or null on a miss (an unreadable entry counts as a miss). */
  get<T>(key: string): Promise<T | null>;
  set<T>(key: string, value: T, ttlMs: number): Promise<void>;
  delete(key: string): Promise<void>;
  /**
   * The cached value, or the loader's (then stored for `ttlMs`). Concurrent misses for the same key
   * in this process share one loader call. `forceRefresh` skips the read but still stores.
   * A store that is unavailable (KeyValueUnavailableError) is skipped: loaded, not stored.
   */
  getOrLoad<T>(
    key: string,
    ttlMs: number,
    loader: () => Promise<T>,
    options?: { forceRefresh?: boolean },
  ): Promise<{ value: T; cached: boolean }>;
}

/**
 * JSON values in a KeyValueStore under `<prefix>:<key>`. Values must survive JSON.stringify
 * (no Dates, Maps, bigints); callers that need more validate what `get` returns.
 */
export function createJsonCache(
  kv: KeyValueStore,
  {
    prefix,
    onLookup,
  }: {
    prefix: string;
    /** Called once per read with the key (without prefix) and whether it hit: the cache metrics. */
    onLookup?: (key: string, hit: boolean) => void;
  },
): JsonCache {
  const inFlight = new Map<string, Promise<unknown>>();
  const fullKey = (key: string): string => `${prefix}:${key}`;

  const get = async <T>(key: string): Promise<T | null> => {
    const raw = await kv.get(fullKey(key));
    let value: T | null = null;
    if (raw !== null) {
      try {
        value = JSON.parse(raw) as T;
      } catch {
        value = null;
      }
    }
    onLookup?.(key, value !== null);
    return value;
  };

  const set = async <T>(key: string, value: T, ttlMs: number): Promise<void> => {
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError(`cannot cache a value without a JSON form under ${key}`);
    await kv.set(fullKey(key), text, { ttlMs });
  };

  const missWhenUnavailable = (error: unknown): null => {
    if (isKeyValueUnavailable(error)) return null;
    throw error;
  };

  return {
    get,
    set,
    async delete(key) {
      await kv.delete(fullKey(key));
    },
    async getOrLoad<T>(
      key: string,
      ttlMs: number,
      loader: () => Promise<T>,
      options: { forceRefresh?: boolean } = {},
    ): Promise<{ value: T; cached: boolean }> {
      // A cache is an optimisation: when the store cannot answer (KeyValueUnavailableError, already
      // bounded by the store's command timeout) the value is loaded, and not stored, instead.
      if (!options.forceRefresh) {
        const hit = await get<T>(key).catch(missWhenUnavailable);
        if (hit !== null) return { value: hit, cached: true };
      }
      let flight = inFlight.get(key) as Promise<T> | undefined;
      if (!flight) {
        flight = (async () => {
          const value = await loader();
          await set(key, value, ttlMs).catch(missWhenUnavailable);
          return value;
        })();
        inFlight.set(key, flight);
        const clear = (): void => {
          if (inFlight.get(key) === flight) inFlight.delete(key);
        };
        flight.then(clear, clear);
      }
      return { value: await flight, cached: false };
    },
  };
}
