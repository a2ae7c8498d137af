/**
 * Short-lived in-process cache of key hash → account, so that a request does not need a
 * document-store round trip to authenticate. Every change that affects authentication (key
 * regenerated or revoked, tier changed) is broadcast through the KeyValueStore's pub/sub; every
 * gateway replica subscribes at start and drops the account's entries. `invalidate` resolves only
 * after the broadcast came back to this replica through the store, so every subscriber has been
 * sent the message before the admin call answers.
 */
import { randomUUID } from 'node:crypto';
import type { Clock, KeyValueStore } from '@subx/ports';
import type { Account } from './types.ts';
import type { Logger } from './logger.ts';

const KEY_INVALIDATION_CHANNEL = 'access:key-invalidation:v1';

export interface KeyCache {
  /** Reads the cache; on a miss runs `load` and caches its non-null result unless an invalidation raced it. */
  get(keyHash: string, load: () => Promise<Account | null>): Promise<Account | null>;
  /** Drops the account's entries here and on every replica; resolves once broadcast. */
  invalidate(accountId: string): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

interface Entry {
  account: Account;
  expiresAt: number;
}

export interface KeyCacheOptions {
  kv: KeyValueStore;
  clock: Clock;
  logger: Logger;
  /** Default 30 s: the longest a missed invalidation could keep a dead key alive. */
  ttlMs?: number;
  maxEntries?: number;
  /** Upper bound on waiting for our own broadcast to come back. */
  echoTimeoutMs?: number;
}

export function createKeyCache(options: KeyCacheOptions): KeyCache {
  const { kv, clock, logger } = options;
  const ttlMs = options.ttlMs ?? 30_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const echoTimeoutMs = options.echoTimeoutMs ?? 2_000;
  const entries = new Map<string, Entry>();
  const echoWaiters = new Map<string, () => void>();
  // Bumped on every invalidation: a load that started before it must not fill the cache.
  let generation = 0;
  let unsubscribe: (() => Promise<void>) | undefined;

  function dropAccount(accountId: string): void {
    generation += 1;
    for (const [hash, entry] of entries) if (entry.account.id === accountId) entries.delete(hash);
  }

  function onMessage(raw: string): void {
    let message: { accountId?: unknown; nonce?: unknown };
    try {
      message = JSON.parse(raw) as typeof message;
    } catch {
      generation += 1;
      entries.clear();
      return;
    }
    if (typeof message.accountId === 'string') dropAccount(message.accountId);
    else {
      generation += 1;
      entries.clear();
    }
    if (typeof message.nonce === 'string') {
      const waiter = echoWaiters.get(message.nonce);
      // Resolve on a later turn: subscribers in this same process that were handed the message
      // in this turn (embedded replicas, tests) must have applied it before the admin call answers.
      if (waiter) setImmediate(waiter);
    }
  }

  return {
    async get(keyHash, load) {
      const hit = entries.get(keyHash);
      const now = clock.now();
      if (hit && hit.expiresAt > now) return hit.account;
      if (hit) entries.delete(keyHash);
      const startedAt = generation;
      const account = await load();
      if (account && generation === startedAt && unsubscribe) {
        // Without a live subscription we would miss invalidations, so we do not cache at all.
        if (entries.size >= maxEntries) {
          const oldest = entries.keys().next();
          if (!oldest.done) entries.delete(oldest.value);
        }
        entries.set(keyHash, { account, expiresAt: clock.now() + ttlMs });
      }
      return account;
    },

    async invalidate(accountId) {
      dropAccount(accountId);
      const nonce = randomUUID();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const echoed = unsubscribe
        ? new Promise<void>((resolve) => {
            echoWaiters.set(nonce, resolve);
            timer = setTimeout(() => {
              logger.warn({ accountId }, 'key invalidation broadcast did not come back in time');
              resolve();
            }, echoTimeoutMs);
          })
        : Promise.resolve();
      try {
        await kv.publish(KEY_INVALIDATION_CHANNEL, JSON.stringify({ accountId, nonce }));
        await echoed;
      } finally {
        if (timer) clearTimeout(timer);
        echoWaiters.delete(nonce);
      }
    },

    async start() {
      if (unsubscribe) return;
      unsubscribe = await kv.subscribe(KEY_INVALIDATION_CHANNEL, onMessage);
    },

    async stop() {
      const u = unsubscribe;
      unsubscribe = undefined;
      entries.clear();
      if (u) await u();
    },
  };
}
