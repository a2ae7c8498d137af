/**
 * Single-use, in-process credentials that let the admin API make one key-bound call on behalf of
 * an account without the account's API key (which is stored only as a hash). The dashboard's
 * playground uses it through `POST /admin/v1/accounts/{id}/calls`: the admin route issues a token
 * and injects the call into this same process at once, so a token never leaves the process, needs
 * no cross-replica state, and dies on first use or after a few seconds.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '@subx/ports';
import type { Account } from '@subx/credits';

const DELEGATION_PREFIX = 'sxd_';
const DEFAULT_TTL_MS = 10_000;
/** Bounds the map: at most this many calls on behalf of accounts may be in flight at once. */
const MAX_OPEN = 1_000;

export interface DelegationRegistry {
  /** A token that authenticates as `account` once, within the TTL. Throws when too many are open. */
  issue(account: Account): string;
  /** The token's account (and the token is spent), or null for anything else. */
  redeem(token: unknown): Account | null;
}

export function createDelegationRegistry(deps: { clock: Clock; ttlMs?: number }): DelegationRegistry {
  const ttlMs = deps.ttlMs ?? DEFAULT_TTL_MS;
  const open = new Map<string, { account: Account; expiresAtMs: number }>();

  function sweep(now: number): void {
    for (const [token, entry] of open) if (entry.expiresAtMs <= now) open.delete(token);
  }

  return {
    issue(account) {
      const now = deps.clock.now();
      if (open.size >= MAX_OPEN) sweep(now);
      if (open.size >= MAX_OPEN) throw new Error('too many delegated calls in flight');
      const token = `${DELEGATION_PREFIX}${randomBytes(32).toString('base64url')}`;
      open.set(token, { account: { ...account }, expiresAtMs: now + ttlMs });
      return token;
    },
    redeem(token) {
      if (typeof token !== 'string' || !token.startsWith(DELEGATION_PREFIX)) return null;
      const entry = open.get(token);
      if (!entry) return null;
      open.delete(token);
      return entry.expiresAtMs > deps.clock.now() ? entry.account : null;
    },
  };
}
