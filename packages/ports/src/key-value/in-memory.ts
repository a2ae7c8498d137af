import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../clock.ts';
import { checkPrefix } from './port.ts';
import type { InProcessCounters, KeyValueStore } from './port.ts';

export interface InMemoryKeyValueStoreOptions {
  /** Expiry is judged by this clock, so tests move time instead of sleeping. */
  clock?: Clock;
}

/** The embedded store, which can also list its keys (a real store's would need a SCAN). */
export interface InMemoryKeyValueStore extends KeyValueStore {
  readonly inProcess: InProcessCounters;
  /** The keys that hold a value now (expired ones left out), e.g. for a test that nothing was stored. */
  keys(): string[];
}

interface Entry {
  value: string;
  expiresAt: number | null;
  /** The value as an integer, once read or written as one (a counter): parsed once, not per step. */
  integer: number | undefined;
}

const SWEEP_EVERY_WRITES = 1_000;

/**
 * KeyValueStore in process memory with Redis's semantics. Pub/sub reaches the subscribers of this
 * instance only (there is no other process to reach); messages are delivered asynchronously, as
 * over a network.
 */
export function createInMemoryKeyValueStore(
  options: InMemoryKeyValueStoreOptions = {},
): InMemoryKeyValueStore {
  const clock = options.clock ?? systemClock;
  const entries = new Map<string, Entry>();
  const channels = new Map<string, Set<(message: string) => void>>();
  const clientId = randomUUID();
  let writes = 0;
  let closed = false;

  const assertOpen = (): void => {
    if (closed) throw new Error('key-value store is closed');
  };

  const live = (key: string): Entry | null => {
    const entry = entries.get(key);
    if (!entry) return null;
    if (entry.expiresAt !== null && entry.expiresAt <= clock.now()) {
      entries.delete(key);
      return null;
    }
    return entry;
  };

  /** Expired keys are dropped lazily on read; this bounds what never gets read again. */
  const write = (key: string, entry: Entry): void => {
    entries.set(key, entry);
    if (++writes % SWEEP_EVERY_WRITES === 0) {
      for (const k of [...entries.keys()]) live(k);
    }
  };

  /** The entry's value as an integer (Redis's INCRBY refuses anything else), parsed once. */
  const integerOf = (key: string, entry: Entry): number => {
    if (entry.integer !== undefined) return entry.integer;
    const n = Number(entry.value);
    if (!/^-?\d+$/.test(entry.value) || !Number.isSafeInteger(n)) {
      throw new Error(`value at ${key} is not an integer`);
    }
    entry.integer = n;
    return n;
  };

  /**
   * A counter's step from its live entry (or none): one lookup of the key per step, the entry
   * updated where it is (the daily counter of every admitted request steps here).
   */
  const step = (
    key: string,
    entry: Entry | null,
    current: number,
    by: number,
    expireAtMs: number | undefined,
  ): number => {
    const value = current + by;
    if (entry === null) {
      write(key, { value: String(value), expiresAt: expireAtMs ?? null, integer: value });
      return value;
    }
    entry.value = String(value);
    entry.integer = value;
    if (expireAtMs !== undefined) entry.expiresAt = expireAtMs;
    return value;
  };

  const assertInteger = (by: number): void => {
    if (!Number.isSafeInteger(by)) throw new Error(`increment must be an integer, got ${by}`);
  };

  const counters: InProcessCounters = {
    increment(key, by, opts = {}) {
      assertOpen();
      assertInteger(by);
      const entry = live(key);
      return step(key, entry, entry ? integerOf(key, entry) : 0, by, opts.expireAtMs);
    },
    incrementWithin(key, by, limit, opts = {}) {
      assertOpen();
      assertInteger(by);
      const entry = live(key);
      const current = entry ? integerOf(key, entry) : 0;
      if (current + by > limit) return { applied: false, value: current };
      return { applied: true, value: step(key, entry, current, by, opts.expireAtMs) };
    },
  };

  return {
    keys() {
      return [...entries.keys()].filter((key) => live(key) !== null);
    },
    async get(key) {
      assertOpen();
      return live(key)?.value ?? null;
    },
    async set(key, value, opts = {}) {
      assertOpen();
      write(key, {
        value,
        expiresAt: opts.ttlMs === undefined ? null : clock.now() + opts.ttlMs,
        integer: undefined,
      });
    },
    async setIfAbsent(key, value, opts = {}) {
      assertOpen();
      if (live(key)) return false;
      write(key, {
        value,
        expiresAt: opts.ttlMs === undefined ? null : clock.now() + opts.ttlMs,
        integer: undefined,
      });
      return true;
    },
    async delete(key) {
      assertOpen();
      entries.delete(key);
    },
    async deleteByPrefix(prefix) {
      assertOpen();
      checkPrefix(prefix);
      let deleted = 0;
      for (const key of [...entries.keys()]) {
        if (key.startsWith(prefix) && live(key)) {
          entries.delete(key);
          deleted += 1;
        }
      }
      return deleted;
    },
    async ttlMs(key) {
      assertOpen();
      const entry = live(key);
      if (!entry || entry.expiresAt === null) return null;
      return entry.expiresAt - clock.now();
    },
    async increment(key, by, opts) {
      return counters.increment(key, by, opts);
    },
    async incrementWithin(key, by, limit, opts) {
      return counters.incrementWithin(key, by, limit, opts);
    },
    inProcess: counters,
    clientId,
    async publish(channel, message) {
      assertOpen();
      const handlers = channels.get(channel);
      for (const handler of handlers ?? []) {
        setImmediate(() => {
          try {
            handler(message);
          } catch (error) {
            // A subscriber's bug must not break the publisher or other subscribers.
            console.error('key-value subscriber threw', error);
          }
        });
      }
      // This instance is the only client its messages reach.
      return handlers && handlers.size > 0 ? 1 : 0;
    },
    async subscribe(channel, handler) {
      assertOpen();
      // Each subscription is its own registration, even when the same function subscribes twice.
      const registration = (message: string): void => handler(message);
      let handlers = channels.get(channel);
      if (!handlers) {
        handlers = new Set();
        channels.set(channel, handlers);
      }
      handlers.add(registration);
      return async () => {
        channels.get(channel)?.delete(registration);
      };
    },
    async ping() {
      assertOpen();
    },
    async close() {
      closed = true;
      channels.clear();
    },
  };
}
