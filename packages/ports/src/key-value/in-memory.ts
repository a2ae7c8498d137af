import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../clock.ts';
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

  const integerValue = (key: string): number => {
    const entry = live(key);
    if (!entry) return 0;
    const n = Number(entry.value);
    if (!/^-?\d+$/.test(entry.value) || !Number.isSafeInteger(n)) {
      throw new Error(`value at ${key} is not an integer`);
    }
    return n;
  };

  const assertInteger = (by: number): void => {
    if (!Number.isSafeInteger(by)) throw new Error(`increment must be an integer, got ${by}`);
  };

  const add = (key: string, by: number, expireAtMs: number | undefined): number => {
    const value = integerValue(key) + by;
    const expiresAt = expireAtMs ?? live(key)?.expiresAt ?? null;
    write(key, { value: String(value), expiresAt });
    return value;
  };

  const counters: InProcessCounters = {
    increment(key, by, opts = {}) {
      assertOpen();
      assertInteger(by);
      return add(key, by, opts.expireAtMs);
    },
    incrementWithin(key, by, limit, opts = {}) {
      assertOpen();
      assertInteger(by);
      const current = integerValue(key);
      if (current + by > limit) return { applied: false, value: current };
      return { applied: true, value: add(key, by, opts.expireAtMs) };
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
      write(key, { value, expiresAt: opts.ttlMs === undefined ? null : clock.now() + opts.ttlMs });
    },
    async setIfAbsent(key, value, opts = {}) {
      assertOpen();
      if (live(key)) return false;
      write(key, { value, expiresAt: opts.ttlMs === undefined ? null : clock.now() + opts.ttlMs });
      return true;
    },
    async delete(key) {
      assertOpen();
      entries.delete(key);
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
