/**
 * Sessions in the KeyValueStore (Redis in deployments, in-memory in `npm start`), so every
 * dashboard replica sees the same sessions. The cookie carries a 256-bit random id; the store key
 * is its SHA-256, so a dump of Redis holds no usable session id. Only signed-in people have a
 * session (anonymous forms carry a stateless signed CSRF token, anonymous-csrf.ts, so anonymous
 * visits write nothing to the store); sign-in creates it with a new id and a new CSRF token.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { KeyValueStore } from '@subx/ports';

export interface Session {
  id: string;
  userId: string;
  csrf: string;
  createdAt: number;
  /** The user's session epoch at sign-in; a password reset bumps the user's, voiding this one. */
  epoch: number;
  /** When the password was last entered in this session (sign-in or re-authentication), epoch ms. */
  authAt: number;
}

const ID_PATTERN = /^[A-Za-z0-9_-]{43}$/;

const storeKey = (id: string) => `dashboard:session:${createHash('sha256').update(id).digest('base64url')}`;
const newSecret = () => randomBytes(32).toString('base64url');

export interface SessionStore {
  load(id: string | undefined): Promise<Session | null>;
  /** A new signed-in session (new id, new CSRF token), authenticated now. */
  create(userId: string, epoch: number): Promise<Session>;
  /** Records that the password was just entered again (operator step-up); same id, same expiry. */
  reauthenticated(session: Session): Promise<Session>;
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
      // Anonymous sessions of earlier versions (before stateless CSRF) are not sessions any more.
      if (!data.userId) return null;
      // Sessions of earlier versions have no authAt: operators enter their password again.
      return { id, ...data, authAt: data.authAt ?? 0 };
    },
    async create(userId, epoch) {
      const at = now();
      const session: Session = {
        id: newSecret(),
        userId,
        csrf: newSecret(),
        createdAt: at,
        epoch,
        authAt: at,
      };
      const { id, ...data } = session;
      await kv.set(storeKey(id), JSON.stringify(data), { ttlMs });
      return session;
    },
    async reauthenticated(session) {
      const updated = { ...session, authAt: now() };
      const { id, ...data } = updated;
      const left = session.createdAt + ttlMs - now();
      if (left > 0) await kv.set(storeKey(id), JSON.stringify(data), { ttlMs: left });
      return updated;
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
