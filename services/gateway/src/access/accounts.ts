/**
 * Accounts and their API key, stored in the DocumentStore (`accounts` collection). The key lives
 * on the account document (hash, display prefix/last4, status), so regenerate and revoke are one
 * atomic single-document update: the old hash is gone from the store the moment the update
 * returns, and the key cache broadcast follows before the admin call answers.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Clock, Collection, DocumentStore } from '@subx/ports';
import { ACCOUNTS_COLLECTION, createAccountBalances, utcMonth } from '@subx/credits';
import type { AccessPricing, AccountBalanceDoc, Tier } from '@subx/credits';
import type { StoredRetention } from '@subx/contracts/retention';
import type { KeyCache } from './key-cache.ts';
import type { KeyHolder } from './key-limits.ts';
import { limitsOf, type NamedKeys } from './named-keys.ts';
import {
  generateApiKey,
  hashApiKey,
  isWellFormedApiKey,
  keyDisplay,
  rememberingKeyHasher,
} from './api-key.ts';

type KeyStatus = 'active' | 'revoked';

export interface AccountDoc extends AccountBalanceDoc {
  email: string | null;
  created_at: string;
  key: {
    /**
     * Names this key (not secret): what it created (jobs, watches) carries it, so that what a
     * leaked key set going can be stopped when it is revoked. Absent on keys made before it
     * existed: keyIdOf names those by their creation time.
     */
    id?: string;
    /** HMAC-SHA-256(pepper, key), base64url; null once revoked. */
    hash: string | null;
    prefix: string;
    last4: string;
    created_at: string;
    status: KeyStatus;
    /** The last admitted call with it, to the minute (key-use.ts); absent until the first. */
    last_used_at?: string;
  };
  /** The workspace's data retention (retention.ts); absent: every default. */
  retention?: StoredRetention;
  /**
   * Set when the account's deletion began (src/deletion/): from then on no key of it is admitted,
   * the account reads as unknown, and a repeated deletion finishes what a failed one left.
   */
  deleting_at?: string;
}

const ACCOUNT_ID_PATTERN = /^acct_[0-9a-f]{32}$/;

/** The key's id: its own, or for a key made before keys had one, its creation time. */
export function keyIdOf(key: AccountDoc['key']): string {
  return key.id ?? `key_made_${key.created_at}`;
}

function isAccountId(value: unknown): value is string {
  return typeof value === 'string' && ACCOUNT_ID_PATTERN.test(value);
}

function sameHash(stored: string, presented: string): boolean {
  const a = Buffer.from(stored);
  const b = Buffer.from(presented);
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface AccountRepository {
  readonly collection: Collection<AccountDoc>;
  createAccount(input: {
    tier: Tier;
    credits?: number;
    email?: string | null;
  }): Promise<{ account: AccountDoc; apiKey: string }>;
  /** The account with this month's allowance granted if it was not yet. */
  get(accountId: string): Promise<AccountDoc | null>;
  update(
    accountId: string,
    change: { tier?: Tier; credits?: number; addCredits?: number },
  ): Promise<AccountDoc | null>;
  /** Issues a new key (the old one, if any, stops working at once). Null for an unknown account. */
  regenerateKey(accountId: string): Promise<string | null>;
  /** False for an unknown account. Revoking a revoked key is a no-op that returns true. */
  revokeKey(accountId: string): Promise<boolean>;
  /**
   * The first step of deleting the account: marks it `deleting_at` (kept from an earlier, failed
   * attempt), revokes its primary key and every named key, and drops them from the key cache of
   * every replica. From its answer on no key of the account is admitted anywhere. The account as
   * marked (still stored), or null for an account that does not exist (or is gone already).
   */
  beginDeletion(accountId: string): Promise<AccountDoc | null>;
  /**
   * The key's account, or null (malformed, unknown, regenerated or revoked key). A named key's
   * account comes with the key's limits (key-limits.ts), which the caller checks.
   */
  authenticate(apiKey: unknown): Promise<KeyHolder | null>;
  /**
   * authenticate's answer when it needs no store read: null for a malformed key, the account of a
   * key in the cache; undefined when only authenticate can tell.
   */
  authenticateNow(apiKey: unknown): KeyHolder | null | undefined;
  /** Grants the tier's monthly allowance once per UTC month (idempotent, atomic). */
  ensureMonthlyAllowance(accountId: string): Promise<void>;
  init(): Promise<void>;
}

export interface AccountRepositoryOptions {
  store: DocumentStore;
  clock: Clock;
  pepper: string;
  /**
   * The pepper being rotated out (API_KEY_PEPPER_PREVIOUS): a key whose stored hash is under it
   * still verifies, and its hash is rewritten under `pepper` on that first use, so after a while
   * every active key has moved and the old pepper can be dropped.
   */
  previousPepper?: string;
  pricing: AccessPricing;
  keyCache: KeyCache;
  /** The account's named keys, tried when a key is not an account's primary key. */
  namedKeys?: NamedKeys;
}

export function createAccountRepository(options: AccountRepositoryOptions): AccountRepository {
  const { store, clock, pepper, pricing, keyCache, namedKeys } = options;
  const hashOfPresentedKey = rememberingKeyHasher(pepper);
  const hashUnderPreviousPepper = options.previousPepper
    ? rememberingKeyHasher(options.previousPepper)
    : null;
  const accounts = store.collection<AccountDoc>(ACCOUNTS_COLLECTION);
  const nowIso = () => new Date(clock.now()).toISOString();

  /**
   * The account whose stored hash is the key's hash under the previous pepper, with that hash
   * replaced by `hash` (one conditional update: a key revoked or regenerated meanwhile is not
   * touched). null when no active key matches under the previous pepper either.
   */
  async function rehashFromPreviousPepper(apiKey: string, hash: string): Promise<AccountDoc | null> {
    const old = hashUnderPreviousPepper!(apiKey);
    const doc = await accounts.findOne({ 'key.hash': old, 'key.status': 'active' });
    if (!doc || doc.key.hash === null || !sameHash(doc.key.hash, old)) return null;
    return accounts.findOneAndUpdate(
      { _id: doc._id, 'key.hash': old, 'key.status': 'active' },
      { $set: { 'key.hash': hash, updated_at: nowIso() } },
      { returnDocument: 'after' },
    );
  }

  function newKey(): { apiKey: string; key: AccountDoc['key'] } {
    const apiKey = generateApiKey();
    return {
      apiKey,
      key: {
        id: `key_${randomBytes(12).toString('hex')}`,
        hash: hashApiKey(apiKey, pepper),
        ...keyDisplay(apiKey),
        created_at: nowIso(),
        status: 'active',
      },
    };
  }

  const { ensureMonthlyAllowance } = createAccountBalances({ store, clock, pricing });

  /** The account of the named key with this hash, with the key's limits; null for none. */
  async function namedKeyHolder(apiKey: string, hash: string): Promise<KeyHolder | null> {
    let key = await namedKeys!.findActive(hash);
    if (!key && hashUnderPreviousPepper) {
      // As for primary keys: rewritten under the current pepper on first use.
      const old = hashUnderPreviousPepper(apiKey);
      if (await namedKeys!.findActive(old)) key = await namedKeys!.rehash(old, hash);
    }
    if (!key || key.hash === null || !sameHash(key.hash, hash)) return null;
    const account = await accounts.findOne({ _id: key.account_id });
    if (!account || account.deleting_at !== undefined) return null;
    return { id: account._id, tier: account.tier, keyId: key._id, limits: limitsOf(key) };
  }

  return {
    collection: accounts,

    async init() {
      await accounts.createIndex({ 'key.hash': 1 }, { name: 'key_hash' });
      // The job service looks for settings changed since its last look (services/jobs/src/retention).
      await accounts.createIndex({ 'retention.changed_at': 1 }, { name: 'retention_changes' });
    },

    async createAccount(input) {
      const { apiKey, key } = newKey();
      const now = nowIso();
      const doc: AccountDoc = {
        _id: `acct_${randomUUID().replaceAll('-', '')}`,
        tier: input.tier,
        // Creation is this month's grant: explicit credits replace the allowance.
        credits: input.credits ?? pricing.monthlyAllowance[input.tier],
        allowance_month: utcMonth(clock.now()),
        email: input.email ?? null,
        created_at: now,
        updated_at: now,
        key,
        holds: {},
      };
      await accounts.insertOne(doc);
      return { account: doc, apiKey };
    },

    async get(accountId) {
      if (!isAccountId(accountId)) return null;
      await ensureMonthlyAllowance(accountId);
      const doc = await accounts.findOne({ _id: accountId });
      return doc && doc.deleting_at === undefined ? doc : null;
    },

    async update(accountId, change) {
      if (!isAccountId(accountId)) return null;
      await ensureMonthlyAllowance(accountId);
      const set: Record<string, unknown> = { updated_at: nowIso() };
      if (change.tier !== undefined) set.tier = change.tier;
      if (change.credits !== undefined) set.credits = change.credits;
      const inc = change.addCredits ? { credits: change.addCredits } : undefined;
      // $set and $inc on the same field conflict: set first, then add.
      let updated = await accounts.findOneAndUpdate(
        { _id: accountId, deleting_at: { $exists: false } },
        { $set: set },
        { returnDocument: 'after' },
      );
      if (updated && inc) {
        updated = await accounts.findOneAndUpdate(
          { _id: accountId },
          { $inc: inc },
          { returnDocument: 'after' },
        );
      }
      if (updated && change.tier !== undefined) await keyCache.invalidate(accountId);
      return updated;
    },

    async regenerateKey(accountId) {
      if (!isAccountId(accountId)) return null;
      const { apiKey, key } = newKey();
      const updated = await accounts.findOneAndUpdate(
        { _id: accountId, deleting_at: { $exists: false } },
        { $set: { key, updated_at: nowIso() } },
        { returnDocument: 'after' },
      );
      if (!updated) return null;
      await keyCache.invalidate(accountId);
      return apiKey;
    },

    async revokeKey(accountId) {
      if (!isAccountId(accountId)) return false;
      const updated = await accounts.findOneAndUpdate(
        { _id: accountId, deleting_at: { $exists: false } },
        { $set: { 'key.hash': null, 'key.status': 'revoked', updated_at: nowIso() } },
        { returnDocument: 'after' },
      );
      if (!updated) return false;
      await keyCache.invalidate(accountId);
      return true;
    },

    async beginDeletion(accountId) {
      if (!isAccountId(accountId)) return null;
      const found = await accounts.findOne({ _id: accountId });
      if (!found) return null;
      const at = found.deleting_at ?? nowIso();
      const marked = await accounts.findOneAndUpdate(
        { _id: accountId },
        { $set: { deleting_at: at, 'key.hash': null, 'key.status': 'revoked', updated_at: nowIso() } },
        { returnDocument: 'after' },
      );
      if (!marked) return null;
      await namedKeys?.revokeAll(accountId);
      // After both revocations: a replica that reloads a key meanwhile finds it dead in the store.
      await keyCache.invalidate(accountId);
      return marked;
    },

    authenticateNow(apiKey) {
      if (!isWellFormedApiKey(apiKey)) return null;
      return keyCache.peek(hashOfPresentedKey(apiKey));
    },

    async authenticate(apiKey) {
      if (!isWellFormedApiKey(apiKey)) return null;
      const hash = hashOfPresentedKey(apiKey);
      return keyCache.get(hash, async () => {
        let doc = await accounts.findOne({ 'key.hash': hash, 'key.status': 'active' });
        if (!doc && hashUnderPreviousPepper) doc = await rehashFromPreviousPepper(apiKey, hash);
        if (!doc || doc.key.hash === null) return namedKeys ? namedKeyHolder(apiKey, hash) : null;
        // The store matched on the hash already; compare again in constant time so that a
        // store-side collation or prefix match can never authenticate a different key.
        if (!sameHash(doc.key.hash, hash)) return null;
        return { id: doc._id, tier: doc.tier, keyId: keyIdOf(doc.key) };
      });
    },

    ensureMonthlyAllowance,
  };
}
