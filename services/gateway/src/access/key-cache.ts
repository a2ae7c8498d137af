/**
 * Short-lived in-process cache of key hash → account, so that a request does not need a
 * document-store round trip to authenticate. Every change that affects authentication (key
 * regenerated or revoked, tier changed) is broadcast through the KeyValueStore's pub/sub; every
 * gateway replica subscribes at start and drops the account's entries.
 *
 * decisions.md: the change holds on every replica once the admin call returns. Redis hands a
 * published message to every subscriber before it answers PUBLISH, but each replica acts on it
 * only when its event loop reads it, a moment later: waiting for our own echo alone let the other
 * replica of access-real-engines.test.ts admit the old key about one loaded `npm test` run in
 * two. So every replica that received the broadcast confirms it on a second channel after
 * dropping the entries, and `invalidate` resolves once as many stores confirmed as PUBLISH said it
 * reached (bounded by `echoTimeoutMs`).
 *
 * A replica whose subscription connection is down is not among those PUBLISH reaches, and what
 * is published meanwhile never reaches it: from the moment the store reports the loss until it is
 * subscribed again, the cache holds nothing, and each request reads its key from the store.
 * What is left: a connection that died without the store noticing (no close seen) still counts
 * as a receiver that never confirms; `invalidate` then answers after `echoTimeoutMs` with a
 * warning, and that replica's entry lapses within `ttlMs`.
 */
import { randomUUID } from 'node:crypto';
import type { Clock, KeyValueStore } from '@subx/ports';
import type { KeyHolder } from './key-limits.ts';
import type { Logger } from '@subx/ports';

const KEY_INVALIDATION_CHANNEL = 'access:key-invalidation:v1';
/** `{nonce, client}`: the store `client` (KeyValueStore.clientId) applied invalidation `nonce`. */
const KEY_INVALIDATION_APPLIED_CHANNEL = 'access:key-invalidation-applied:v1';

export interface KeyCache {
  /** The cached account of a key hash, or undefined when none is held (nothing is loaded). */
  peek(keyHash: string): KeyHolder | undefined;
  /** Reads the cache; on a miss runs `load` and caches its non-null result unless an invalidation raced it. */
  get(keyHash: string, load: () => Promise<KeyHolder | null>): Promise<KeyHolder | null>;
  /** Drops the account's entries here and on every replica; resolves once every replica confirmed. */
  invalidate(accountId: string): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

interface Entry {
  account: KeyHolder;
  expiresAt: number;
}

export interface KeyCacheOptions {
  kv: KeyValueStore;
  clock: Clock;
  logger: Logger;
  /** Default 30 s: the longest a missed invalidation could keep a dead key alive. */
  ttlMs?: number;
  maxEntries?: number;
  /** Upper bound on waiting for the replicas' confirmations (a frozen replica never sends one). */
  echoTimeoutMs?: number;
}

export function createKeyCache(options: KeyCacheOptions): KeyCache {
  const { kv, clock, logger } = options;
  const ttlMs = options.ttlMs ?? 30_000;
  const maxEntries = options.maxEntries ?? 10_000;
  const echoTimeoutMs = options.echoTimeoutMs ?? 2_000;
  const entries = new Map<string, Entry>();
  /** Per invalidation of ours in flight: the stores that confirmed it, and who waits for them. */
  const confirmations = new Map<string, { clients: Set<string>; expected: number; done: () => void }>();
  // Bumped on every invalidation: a load that started before it must not fill the cache.
  let generation = 0;
  let unsubscribe: (() => Promise<void>) | undefined;
  // False while the subscription's connection is down: invalidations sent meanwhile never reach
  // us, so nothing held can be trusted and nothing loaded is kept until it is back.
  let hearing = true;

  function onConnection(live: boolean): void {
    hearing = live;
    generation += 1;
    entries.clear();
    if (live) logger.info({}, 'key invalidations are heard again; the key cache is back in use');
    else logger.warn({}, 'key invalidations cannot be heard; every request reads its key from the store');
  }

  function settle(nonce: string): void {
    const pending = confirmations.get(nonce);
    if (pending && pending.clients.size >= pending.expected) pending.done();
  }

  function onApplied(raw: string): void {
    let message: { nonce?: unknown; client?: unknown };
    try {
      message = JSON.parse(raw) as typeof message;
    } catch {
      return;
    }
    if (typeof message.nonce !== 'string' || typeof message.client !== 'string') return;
    const pending = confirmations.get(message.nonce);
    if (!pending) return;
    pending.clients.add(message.client);
    settle(message.nonce);
  }

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
      // Sent after the entries are gone. Key caches sharing a store each confirm; the invalidating
      // side counts stores (what PUBLISH counts), so their confirmations count once.
      kv.publish(
        KEY_INVALIDATION_APPLIED_CHANNEL,
        JSON.stringify({ nonce: message.nonce, client: kv.clientId }),
      ).catch((err: unknown) => logger.warn({ err }, 'could not confirm a key invalidation'));
    }
  }

  /** The account cached for a key hash while its entry has not expired. */
  function unexpired(keyHash: string): KeyHolder | undefined {
    const hit = entries.get(keyHash);
    return hit && hit.expiresAt > clock.now() ? hit.account : undefined;
  }

  return {
    peek: unexpired,

    async get(keyHash, load) {
      const cached = unexpired(keyHash);
      if (cached) return cached;
      entries.delete(keyHash); // an expired entry, if there was one
      const startedAt = generation;
      const account = await load();
      if (account && generation === startedAt && unsubscribe && hearing) {
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
      const message = JSON.stringify({ accountId, nonce });
      if (!unsubscribe) {
        await kv.publish(KEY_INVALIDATION_CHANNEL, message);
        return;
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      let done = () => {};
      const confirmed = new Promise<void>((resolve) => (done = resolve));
      const pending = { clients: new Set<string>(), expected: Number.POSITIVE_INFINITY, done };
      // Registered before publishing: a confirmation may arrive before PUBLISH's own reply.
      confirmations.set(nonce, pending);
      try {
        pending.expected = await kv.publish(KEY_INVALIDATION_CHANNEL, message);
        settle(nonce);
        timer = setTimeout(() => {
          logger.warn(
            { accountId, confirmed: pending.clients.size, expected: pending.expected },
            'not every replica confirmed a key invalidation in time; its cache entry lapses within the key cache TTL',
          );
          done();
        }, echoTimeoutMs);
        await confirmed;
      } finally {
        if (timer) clearTimeout(timer);
        confirmations.delete(nonce);
      }
    },

    async start() {
      if (unsubscribe) return;
      // Confirmations first: by the time we count as a receiver of invalidations, we hear them.
      const stopApplied = await kv.subscribe(KEY_INVALIDATION_APPLIED_CHANNEL, onApplied);
      const stopInvalidations = await kv
        .subscribe(KEY_INVALIDATION_CHANNEL, onMessage, { onConnection })
        .catch(async (err: unknown) => {
          await stopApplied();
          throw err;
        });
      hearing = true;
      unsubscribe = async () => {
        await stopInvalidations();
        await stopApplied();
      };
    },

    async stop() {
      const u = unsubscribe;
      unsubscribe = undefined;
      entries.clear();
      if (u) await u();
    },
  };
}
