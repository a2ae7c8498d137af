/**
 * An account's keys as the public `/api/v1/keys` routes and the admin API's per-account twins
 * manage them: the primary key (accounts.ts; listed, never made or revoked here) and the named
 * keys (named-keys.ts). Every change is recorded in the audit log, and a revocation holds on every
 * replica before the call answers (the key cache's broadcast).
 */
import {
  API_KEY_SCOPES,
  type ApiKeyInfo,
  type ApiKeyScope,
  type CreateApiKeyBody,
} from '@subx/contracts/access';
import { AppError, Errors } from '@subx/errors';
import type { AuditActor, AuditLog } from '../domain/audit-log.ts';
import type { AccountDoc, AccountRepository } from './accounts.ts';
import { keyIdOf } from './accounts.ts';
import type { KeyCache } from './key-cache.ts';
import type { NamedKeys } from './named-keys.ts';

/** Who asks, and what they may hand on: a key may only make keys with scopes it has itself. */
export interface KeyManager {
  actor: AuditActor;
  /** The scopes the maker holds; undefined: every scope (the primary key, an operator, an owner). */
  scopes?: ReadonlySet<ApiKeyScope> | undefined;
  sourceIp?: string | null;
}

export interface ApiKeys {
  /** The primary key first, then the named keys by creation; null for an unknown account. */
  list(accountId: string): Promise<ApiKeyInfo[] | null>;
  create(
    accountId: string,
    body: CreateApiKeyBody,
    by: KeyManager,
  ): Promise<{ info: ApiKeyInfo; apiKey: string } | null>;
  /** The revoked key; null for an unknown account or key. The primary key is 400 INVALID_REQUEST here. */
  revoke(accountId: string, keyId: string, by: KeyManager): Promise<ApiKeyInfo | null>;
}

function primaryKeyInfo(doc: AccountDoc): ApiKeyInfo {
  return {
    id: keyIdOf(doc.key),
    name: 'primary',
    primary: true,
    scopes: [...API_KEY_SCOPES],
    prefix: doc.key.prefix,
    last4: doc.key.last4,
    status: doc.key.status,
    created_at: doc.key.created_at,
    expires_at: null,
    allowed_cidrs: null,
    last_used_at: doc.key.last_used_at ?? null,
  };
}

function createdBy(actor: AuditActor): string {
  return actor.id === null ? actor.type : `${actor.type}:${actor.id}`;
}

export function createApiKeys(deps: {
  accounts: Pick<AccountRepository, 'get'>;
  namedKeys: NamedKeys;
  keyCache: Pick<KeyCache, 'invalidate'>;
  audit?: AuditLog;
}): ApiKeys {
  const { accounts, namedKeys, keyCache, audit } = deps;

  return {
    async list(accountId) {
      const doc = await accounts.get(accountId);
      if (!doc) return null;
      return [primaryKeyInfo(doc), ...(await namedKeys.list(accountId))];
    },

    async create(accountId, body, by) {
      const missing = by.scopes ? body.scopes.find((s) => !by.scopes!.has(s)) : undefined;
      if (missing !== undefined) {
        throw new AppError(
          'INSUFFICIENT_SCOPE',
          `A key can only make keys with scopes it has itself; it lacks \`${missing}\`.`,
          { details: { required_scope: missing } },
        );
      }
      if (!(await accounts.get(accountId))) return null;
      const made = await namedKeys.create(accountId, {
        name: body.name,
        scopes: body.scopes,
        expires_at: body.expires_at ?? null,
        allowed_cidrs: body.allowed_cidrs ?? null,
        createdBy: createdBy(by.actor),
      });
      await audit?.record({
        accountId,
        action: 'key.created',
        actor: by.actor,
        target: { type: 'key', id: made.info.id },
        sourceIp: by.sourceIp ?? null,
        details: {
          name: made.info.name,
          scopes: made.info.scopes,
          expires_at: made.info.expires_at,
          allowed_cidrs: made.info.allowed_cidrs,
        },
      });
      return made;
    },

    async revoke(accountId, keyId, by) {
      const doc = await accounts.get(accountId);
      if (!doc) return null;
      if (keyId === keyIdOf(doc.key)) {
        // Not a 409: CONFLICT is retryable, and this never succeeds on a retry.
        throw Errors.invalidRequest(
          'The primary key is replaced or revoked from the dashboard or the admin API, not here.',
        );
      }
      const revoked = await namedKeys.revoke(accountId, keyId);
      if (!revoked) return null;
      await keyCache.invalidate(accountId);
      await audit?.record({
        accountId,
        action: 'key.revoked',
        actor: by.actor,
        target: { type: 'key', id: keyId },
        sourceIp: by.sourceIp ?? null,
        details: { name: revoked.name },
      });
      return revoked;
    },
  };
}

/** 404 for a key id the account does not have. */
export function keyNotFound(): AppError {
  return new AppError('NOT_FOUND', 'The account has no key with this id.');
}
