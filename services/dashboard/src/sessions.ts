/**
 * Sessions in the KeyValueStore (Redis in deployments, in-memory in `npm start`), so every
 * dashboard replica sees the same sessions. The cookie carries a 256-bit random id; the store key
 * is its SHA-256, so a dump of Redis holds no usable session id. Every visitor who sees a form gets
 * a session (anonymous until sign-in) because the CSRF token lives in it; sign-in replaces that
 * session with a new id (fixation) and a new CSRF token.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { KeyValueStore } from '@subx/ports';

export interface Session {
  id: string;
  userId: string | null;
  csrf: string;
  createdAt: number;
  /** The user's session epoch at sign-in; a password reset bumps the user's, voiding this one. */
  epoch: number;
}

const ANONYMOUS_TTL_MS = 3_600_000;
const ID_PATTERN = /^[A-Za-z0-9_-]{43}$/;

const storeKey = (id: string) => `dashboard:session:${createHash('sha256').update(id).digest('base64url')}`;
const newSecret = () => randomBytes(32).toString('base64url');

export interface SessionStore {
  load(id: string | undefined): Promise<Session | null>;
  /** A new session (new id, new CSRF token); signed in when userId is given. */
  create(userId: string | null, epoch?: number): Promise<Session>;
  destroy(id: string): Promise<void>;
}

export function createSessionStore(deps: {
  kv: KeyValueStore;
  ttlMs: number;
  now: () => number;
}): SessionStore {
  const { kv, ttlMs, now } = deps;
  return {
    async load(id) {
      if (!id || !ID_PATTERN.test(id)) return null;
      const stored = await kv.get(storeKey(id));
      if (!stored) return null;
      const data = JSON.parse(stored) as Omit<Session, 'id'>;
      return { id, ...data };
    },
    async create(userId, epoch = 0) {
      const session: Session = { id: newSecret(), userId, csrf: newSecret(), createdAt: now(), epoch };
      const { id, ...data } = session;
      await kv.set(storeKey(id), JSON.stringify(data), { ttlMs: userId ? ttlMs : ANONYMOUS_TTL_MS });
      return session;
    },
    async destroy(id) {
      if (ID_PATTERN.test(id)) await kv.delete(storeKey(id));
    },
  };
}

/** Constant-time comparison of the form's CSRF token with the session's. */
export function csrfMatches(session: Session | null, token: unknown): boolean {
  if (!session || typeof token !== 'string') return false;
  const a = Buffer.from(session.csrf);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
