/**
 * An account's named keys (`api_keys` collection), each with its own scopes, optional expiry and
 * allowed source networks, beside the account's primary key (on the account document,
 * accounts.ts). Only the key's HMAC is stored, as for the primary key; the key itself is answered
 * once, when it is made. Revoking is one update that clears the hash, so the key is dead in the
 * store when the call returns; the key cache's broadcast (the caller's) follows.
 */
import { randomBytes } from 'node:crypto';
import type { Clock, Collection, Doc, DocumentStore } from '@subx/ports';
import { API_KEY_SCOPES, MAX_NAMED_KEYS, type ApiKeyInfo, type ApiKeyScope } from '@subx/contracts/access';
import { Errors } from '@subx/errors';
import { generateApiKey, hashApiKey, keyDisplay } from './api-key.ts';
import { networksOf, parseCidr, type KeyLimits } from './key-limits.ts';

export const NAMED_KEYS_COLLECTION = 'api_keys';
/** A key may be made to last at most this long. */
const MAX_KEY_LIFETIME_MS = 5 * 366 * 24 * 3600 * 1000;
export interface NamedKeyDoc extends Doc {
  _id: string;
  account_id: string;
  name: string;
  /** HMAC-SHA-256(pepper, key), base64url; null once revoked. */
  hash: string | null;
  prefix: string;
  last4: string;
  scopes: ApiKeyScope[];
  expires_at: string | null;
  allowed_cidrs: string[] | null;
  created_at: string;
  /** Who made it: `key:<id>`, `operator` or `member:<id>`. */
  created_by: string;
  last_used_at: string | null;
  status: 'active' | 'revoked';
  revoked_at: string | null;
}

interface NewNamedKey {
  name: string;
  scopes: readonly ApiKeyScope[];
  expires_at?: string | null;
  allowed_cidrs?: readonly string[] | null;
  createdBy: string;
}

export interface NamedKeys {
  readonly collection: Collection<NamedKeyDoc>;
  init(): Promise<void>;
  /** Checks the request (400 INVALID_REQUEST naming what is wrong), stores the key, answers it once. */
  create(accountId: string, input: NewNamedKey): Promise<{ info: ApiKeyInfo; apiKey: string }>;
  /** The account's named keys, oldest first, revoked ones included. */
  list(accountId: string): Promise<ApiKeyInfo[]>;
  /** The revoked key, or null when the account has no key of that id. Revoking twice is a no-op. */
  revoke(accountId: string, keyId: string): Promise<ApiKeyInfo | null>;
  /** Revokes every active key of the account (its deletion); how many were active. */
  revokeAll(accountId: string): Promise<number>;
  /** The active key with this hash, or null. */
  findActive(hash: string): Promise<NamedKeyDoc | null>;
  /** The active key stored under `oldHash`, now stored under `newHash` (pepper rotation); null if none. */
  rehash(oldHash: string, newHash: string): Promise<NamedKeyDoc | null>;
  /** Notes a use of the key (key-use.ts calls it at most once a minute per key). */
  noteUse(keyId: string, atIso: string): Promise<void>;
  /** The account's active keys made by `createdBy` (`member:<id>`, …), oldest first. */
  activeMadeBy(accountId: string, createdBy: string): Promise<NamedKeyDoc[]>;
  /** Names `createdBy` as the key's maker (a removed member's keys handed to another); false if no such active key. */
  reassign(accountId: string, keyId: string, createdBy: string): Promise<boolean>;
}

/** What the key cache keeps of a named key. */
export function limitsOf(doc: NamedKeyDoc): KeyLimits {
  return {
    scopes: new Set(doc.scopes),
    expiresAtMs: doc.expires_at === null ? null : Date.parse(doc.expires_at),
    allowedNetworks: networksOf(doc.allowed_cidrs),
  };
}

function infoOf(doc: NamedKeyDoc, nowMs: number): ApiKeyInfo {
  const expired = doc.expires_at !== null && Date.parse(doc.expires_at) <= nowMs;
  return {
    id: doc._id,
    name: doc.name,
    primary: false,
    scopes: [...doc.scopes],
    prefix: doc.prefix,
    last4: doc.last4,
    status: doc.status === 'revoked' ? 'revoked' : expired ? 'expired' : 'active',
    created_at: doc.created_at,
    expires_at: doc.expires_at,
    allowed_cidrs: doc.allowed_cidrs,
    last_used_at: doc.last_used_at,
  };
}

/** The request's CIDRs in canonical text, or a 400 naming the first that is not one. */
function checkedCidrs(cidrs: readonly string[] | null | undefined): string[] | null {
  if (!cidrs || cidrs.length === 0) return null;
  return cidrs.map((cidr) => {
    const parsed = parseCidr(cidr);
    if (!parsed) {
      throw Errors.invalidRequest(
        `allowed_cidrs: "${cidr}" is not an IPv4 or IPv6 network (e.g. 203.0.113.0/24 or 2001:db8::/32).`,
      );
    }
    return `${parsed[0]}/${parsed[1]}`;
  });
}

function checkedExpiry(expiresAt: string | null | undefined, nowMs: number): string | null {
  if (expiresAt === null || expiresAt === undefined) return null;
  const at = Date.parse(expiresAt);
  if (!Number.isFinite(at)) throw Errors.invalidRequest('expires_at: not a date-time.');
  if (at <= nowMs) throw Errors.invalidRequest('expires_at: must be in the future.');
  if (at - nowMs > MAX_KEY_LIFETIME_MS) throw Errors.invalidRequest('expires_at: at most 5 years ahead.');
  return new Date(at).toISOString();
}

export function createNamedKeys(options: { store: DocumentStore; clock: Clock; pepper: string }): NamedKeys {
  const { store, clock, pepper } = options;
  const keys = store.collection<NamedKeyDoc>(NAMED_KEYS_COLLECTION);
  const nowIso = () => new Date(clock.now()).toISOString();

  return {
    collection: keys,

    async init() {
      await keys.createIndex({ hash: 1 }, { name: 'key_hash' });
      await keys.createIndex({ account_id: 1, created_at: 1 }, { name: 'account_keys' });
    },

    async create(accountId, input) {
      const nowMs = clock.now();
      const scopes = API_KEY_SCOPES.filter((s) => input.scopes.includes(s));
      if (scopes.length === 0) throw Errors.invalidRequest('scopes: name at least one scope.');
      const name = input.name.trim();
      if (name.length === 0) throw Errors.invalidRequest('name: must not be blank.');
      const doc: NamedKeyDoc = {
        _id: `key_${randomBytes(12).toString('hex')}`,
        account_id: accountId,
        name,
        hash: null,
        prefix: '',
        last4: '',
        scopes,
        expires_at: checkedExpiry(input.expires_at, nowMs),
        allowed_cidrs: checkedCidrs(input.allowed_cidrs),
        created_at: new Date(nowMs).toISOString(),
        created_by: input.createdBy,
        last_used_at: null,
        status: 'active',
        revoked_at: null,
      };
      const active = await keys.countDocuments({ account_id: accountId, status: 'active' });
      if (active >= MAX_NAMED_KEYS) {
        throw Errors.invalidRequest(
          `The account has ${MAX_NAMED_KEYS} active keys, the most it may hold; revoke one first.`,
        );
      }
      const apiKey = generateApiKey();
      Object.assign(doc, { hash: hashApiKey(apiKey, pepper) }, keyDisplay(apiKey));
      await keys.insertOne(doc);
      return { info: infoOf(doc, nowMs), apiKey };
    },

    async list(accountId) {
      const docs = await keys.find({ account_id: accountId }, { sort: { created_at: 1 }, limit: 1000 });
      const nowMs = clock.now();
      return docs.map((doc) => infoOf(doc, nowMs));
    },

    async revoke(accountId, keyId) {
      const revoked = await keys.findOneAndUpdate(
        { _id: keyId, account_id: accountId, status: 'active' },
        { $set: { hash: null, status: 'revoked', revoked_at: nowIso() } },
        { returnDocument: 'after' },
      );
      const doc = revoked ?? (await keys.findOne({ _id: keyId, account_id: accountId }));
      return doc ? infoOf(doc, clock.now()) : null;
    },

    async revokeAll(accountId) {
      // At most MAX_NAMED_KEYS are active; the bound only keeps a broken store from looping.
      const active = await keys.find(
        { account_id: accountId, status: 'active' },
        { limit: 10 * MAX_NAMED_KEYS },
      );
      for (const key of active) await this.revoke(accountId, key._id);
      return active.length;
    },

    findActive(hash) {
      return keys.findOne({ hash, status: 'active' });
    },

    rehash(oldHash, newHash) {
      return keys.findOneAndUpdate(
        { hash: oldHash, status: 'active' },
        { $set: { hash: newHash } },
        { returnDocument: 'after' },
      );
    },

    async noteUse(keyId, atIso) {
      await keys.updateOne({ _id: keyId, status: 'active' }, { $set: { last_used_at: atIso } });
    },

    activeMadeBy(accountId, createdBy) {
      return keys.find(
        { account_id: accountId, created_by: createdBy, status: 'active' },
        { sort: { created_at: 1 }, limit: MAX_NAMED_KEYS },
      );
    },

    async reassign(accountId, keyId, createdBy) {
      const result = await keys.updateOne(
        { _id: keyId, account_id: accountId, status: 'active' },
        { $set: { created_by: createdBy } },
      );
      return result.matchedCount > 0;
    },
  };
}
