import type { Clock, KeyValueStore } from '@subx/ports';
import type { z } from 'zod';

/**
 * A typed JSON cache over the KeyValueStore port. Entries carry their own expiry as well as the
 * store's TTL, so expiry follows the injected clock (testable without sleeping) even on stores whose
 * TTL runs on wall time. A corrupt or outdated entry reads as a miss, never as an error.
 */
export interface EntryCache<T> {
  get(key: string): Promise<T | null>;
  /** Stores unless an entry exists; returns the entry that is in the cache afterwards. */
  putIfAbsent(key: string, value: T): Promise<{ stored: boolean; value: T }>;
}

interface Envelope {
  readonly expiresAtMs: number;
  readonly value: unknown;
}

export function createEntryCache<T>(deps: {
  kv: KeyValueStore;
  clock: Clock;
  prefix: string;
  ttlMs: number;
  schema: z.ZodType<T>;
}): EntryCache<T> {
  const { kv, clock, prefix, ttlMs, schema } = deps;
  const read = async (key: string): Promise<T | null> => {
    const raw = await kv.get(prefix + key);
    if (raw === null) return null;
    try {
      const envelope = JSON.parse(raw) as Envelope;
      if (typeof envelope.expiresAtMs !== 'number' || envelope.expiresAtMs <= clock.now()) return null;
      const parsed = schema.safeParse(envelope.value);
      return parsed.success ? parsed.data : null;
    } catch {
      return null;
    }
  };
  return {
    get: read,
    async putIfAbsent(key, value) {
      const envelope: Envelope = { expiresAtMs: clock.now() + ttlMs, value };
      const text = JSON.stringify(envelope);
      if (await kv.setIfAbsent(prefix + key, text, { ttlMs })) return { stored: true, value };
      const existing = await read(key);
      if (existing !== null) return { stored: false, value: existing };
      // The entry there is expired by our clock or unreadable: replace it.
      await kv.set(prefix + key, text, { ttlMs });
      return { stored: true, value };
    },
  };
}
