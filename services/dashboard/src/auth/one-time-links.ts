/**
 * One-time tokens of the emailed links (email verification 24 h, password reset 1 h, confirming a
 * workspace's deletion 30 minutes). Only the
 * token's SHA-256 is stored; redeeming claims a "used" marker with SET NX first, so of two
 * concurrent clicks exactly one wins, and the token is deleted.
 *
 * Only the newest link of each purpose works for a person: issuing one, or using one, retires
 * every older one (a reset link from last week must not reset the password chosen since; a
 * confirmation link of a replaced sign-up must not confirm the new one).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { KeyValueStore } from '@subx/ports';

export type LinkPurpose = 'verify' | 'reset' | 'delete-workspace';
const LINK_TTL_MS: Record<LinkPurpose, number> = {
  verify: 24 * 3_600_000,
  reset: 3_600_000,
  'delete-workspace': 30 * 60_000,
};
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

const hashOf = (token: string) => createHash('sha256').update(token).digest('base64url');

export interface OneTimeLinks {
  issue(purpose: LinkPurpose, userId: string): Promise<string>;
  /** The user id, or null (unknown, expired, used, or malformed). */
  peek(purpose: LinkPurpose, token: unknown): Promise<string | null>;
  redeem(purpose: LinkPurpose, token: unknown): Promise<string | null>;
  /** Retires every link of this purpose for this person. */
  revokeAll(purpose: LinkPurpose, userId: string): Promise<void>;
  /** Whether this person has a link of this purpose that still works. */
  hasLive(purpose: LinkPurpose, userId: string): Promise<boolean>;
}

export function createOneTimeLinks(kv: KeyValueStore): OneTimeLinks {
  const key = (purpose: LinkPurpose, token: string) => `dashboard:link:${purpose}:${hashOf(token)}`;
  const newestKey = (purpose: LinkPurpose, userId: string) => `dashboard:link-newest:${purpose}:${userId}`;
  async function peek(purpose: LinkPurpose, token: unknown) {
    if (typeof token !== 'string' || !TOKEN_PATTERN.test(token)) return null;
    const userId = await kv.get(key(purpose, token));
    if (userId === null) return null;
    return (await kv.get(newestKey(purpose, userId))) === hashOf(token) ? userId : null;
  }
  return {
    async issue(purpose, userId) {
      const token = randomBytes(32).toString('base64url');
      await kv.set(key(purpose, token), userId, { ttlMs: LINK_TTL_MS[purpose] });
      await kv.set(newestKey(purpose, userId), hashOf(token), { ttlMs: LINK_TTL_MS[purpose] });
      return token;
    },
    peek,
    async revokeAll(purpose, userId) {
      await kv.delete(newestKey(purpose, userId));
    },
    async hasLive(purpose, userId) {
      return (await kv.get(newestKey(purpose, userId))) !== null;
    },
    async redeem(purpose, token) {
      const userId = await peek(purpose, token);
      if (userId === null || typeof token !== 'string') return null;
      const k = key(purpose, token);
      if (!(await kv.setIfAbsent(`${k}:used`, '1', { ttlMs: LINK_TTL_MS[purpose] }))) return null;
      await Promise.all([kv.delete(k), kv.delete(newestKey(purpose, userId))]);
      return userId;
    },
  };
}
