import { LRUCache } from 'lru-cache';
import { isKeyValueUnavailable, type KeyValueStore } from './key-value/port.ts';

export interface JsonCache {
  /** The cached value, or null on a miss (an unreadable entry counts as a miss). */
  get<T>(key: string): Promise<T | null>;
  set<T>(key: string, value: T, ttlMs: number): Promise<void>;
  delete(key: string): Promise<void>;
  /**
   * The cached value, or the loader's (then stored for `ttlMs`). Concurrent misses for the same key
   * in this process share one loader call, whose value is handed out fresh (`cached: false`) once:
   * to the earliest caller still waiting when it is loaded; the others get it as `cached: true`,
   * like a read of the entry it becomes (what a caller is charged for is what it alone received).
   * `forceRefresh` skips the read but still stores. A store that is unavailable
   * (KeyValueUnavailableError) is skipped: loaded, not stored.
   *
   * `signal`: the caller stops waiting when it aborts (its call rejects with the signal's reason);
   * when every caller waiting on a load has aborted, the load's own signal aborts, so that the
   * work nobody waits for any more stops and is not stored. A caller without a signal always waits.
   */
  getOrLoad<T>(
    key: string,
    ttlMs: number,
    loader: (signal: AbortSignal) => Promise<T>,
    options?: LoadOptions,
  ): Promise<{ value: T; cached: boolean }>;
}

export interface LoadOptions {
  forceRefresh?: boolean;
  signal?: AbortSignal;
}

/** One load shared by the callers of a key: who still waits, and whether its value was handed out. */
interface Flight {
  readonly promise: Promise<unknown>;
  readonly controller: AbortController;
  waiting: number;
  handed: boolean;
}

export interface JsonCacheOptions {
  prefix: string;
  /** Called once per read with the key (without prefix) and whether it hit: the cache metrics. */
  onLookup?: (key: string, hit: boolean) => void;
  /**
   * Keep the parsed values of up to this many keys (with their stored text, at most
   * `decodedMaxChars` characters in all): a read whose stored text is the one parsed last time
   * returns the same (deep-frozen) value without parsing it again. The store still answers every
   * read, so a value rewritten elsewhere (another replica, a forced refresh) is seen at once.
   * Off (0) by default: callers get values they may not change.
   */
  decodedEntries?: number;
  decodedMaxChars?: number;
}

/** Parsed values are shared between reads: frozen, so that no reader can change another's. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * JSON values in a KeyValueStore under `<prefix>:<key>`. Values must survive JSON.stringify
 * (no Dates, Maps, bigints); callers that need more validate what `get` returns.
 */
export function createJsonCache(kv: KeyValueStore, options: JsonCacheOptions): JsonCache {
  const { prefix, onLookup } = options;
  const inFlight = new Map<string, Flight>();
  const fullKey = (key: string): string => `${prefix}:${key}`;
  const decoded =
    options.decodedEntries && options.decodedEntries > 0
      ? new LRUCache<string, { raw: string; value: unknown }>({
          max: options.decodedEntries,
          maxSize: options.decodedMaxChars ?? 8 * 1024 * 1024,
          sizeCalculation: (entry, key) => entry.raw.length + key.length + 1,
        })
      : undefined;

  const parse = <T>(key: string, raw: string): T | null => {
    if (!decoded) return JSON.parse(raw) as T;
    const last = decoded.get(key);
    // The same string object (the in-memory store) compares at once; a copy (Redis) byte by byte,
    // still far cheaper than parsing it.
    if (last?.raw === raw) return last.value as T;
    const value = deepFreeze(JSON.parse(raw) as T);
    decoded.set(key, { raw, value });
    return value;
  };

  const get = async <T>(key: string): Promise<T | null> => {
    const raw = await kv.get(fullKey(key));
    let value: T | null = null;
    if (raw !== null) {
      try {
        value = parse<T>(key, raw);
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
      loader: (signal: AbortSignal) => Promise<T>,
      options: LoadOptions = {},
    ): Promise<{ value: T; cached: boolean }> {
      const { signal } = options;
      signal?.throwIfAborted();
      // A cache is an optimisation: when the store cannot answer (KeyValueUnavailableError, already
      // bounded by the store's command timeout) the value is loaded, and not stored, instead.
      if (!options.forceRefresh) {
        const hit = await get<T>(key).catch(missWhenUnavailable);
        if (hit !== null) return { value: hit, cached: true };
      }
      signal?.throwIfAborted();
      let flight = inFlight.get(key);
      if (!flight) {
        const controller = new AbortController();
        const promise = (async () => {
          const value = await loader(controller.signal);
          // Nobody waits for it any more: not stored (a late answer of a stopped load).
          controller.signal.throwIfAborted();
          await set(key, value, ttlMs).catch(missWhenUnavailable);
          return value;
        })();
        const started: Flight = { promise, controller, waiting: 0, handed: false };
        flight = started;
        inFlight.set(key, started);
        const clear = (): void => {
          if (inFlight.get(key) === started) inFlight.delete(key);
        };
        promise.then(clear, clear);
      }
      const joined = flight;
      joined.waiting += 1;
      let leave: (() => void) | undefined;
      const left = signal
        ? new Promise<never>((_, reject) => {
            leave = () => {
              joined.waiting -= 1;
              if (joined.waiting === 0) {
                if (inFlight.get(key) === joined) inFlight.delete(key);
                joined.controller.abort(signal.reason);
              }
              reject(signal.reason as Error);
            };
            signal.addEventListener('abort', leave, { once: true });
          })
        : undefined;
      try {
        const value = (await (left ? Promise.race([joined.promise, left]) : joined.promise)) as T;
        const fresh = !joined.handed;
        joined.handed = true;
        return { value, cached: !fresh };
      } finally {
        if (leave) signal!.removeEventListener('abort', leave);
        // A caller that left by its signal was uncounted then.
        if (!signal?.aborted) joined.waiting -= 1;
      }
    },
  };
}
