/**
 * A one-time message for the next page of the same session (POST-redirect-GET after key actions):
 * the new API key must be shown once after the redirect, so it travels neither in the URL (logs,
 * history, Referer) nor in a cookie. It waits in the KeyValueStore for at most a minute, under the
 * session id's hash and encrypted (AES-256-GCM) with a key derived from the session id itself,
 * which the store never holds: a dump of Redis reveals no key. Reading it deletes it.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { KeyValueStore } from '@subx/ports';

export interface Flash {
  kind: 'ok' | 'error';
  text: string;
  /** A key just generated or regenerated, shown once. */
  apiKey?: string;
  /** A named key just made, shown once. */
  createdKey?: { name: string; apiKey: string };
}

const FLASH_TTL_MS = 60_000;

const digest = (label: string, sessionId: string) =>
  createHash('sha256').update(`${label}:${sessionId}`).digest();
const storeKey = (sessionId: string) =>
  `dashboard:flash:${digest('flash-id', sessionId).toString('base64url')}`;

export interface FlashStore {
  put(sessionId: string, flash: Flash): Promise<void>;
  /** The flash left for this session, once: reading it deletes it. */
  take(sessionId: string): Promise<Flash | null>;
}

export function createFlashStore(kv: KeyValueStore): FlashStore {
  return {
    async put(sessionId, flash) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', digest('flash-key', sessionId), iv);
      const sealed = Buffer.concat([cipher.update(JSON.stringify(flash), 'utf8'), cipher.final()]);
      const value = [iv, cipher.getAuthTag(), sealed].map((b) => b.toString('base64url')).join('.');
      await kv.set(storeKey(sessionId), value, { ttlMs: FLASH_TTL_MS });
    },
    async take(sessionId) {
      const key = storeKey(sessionId);
      const value = await kv.get(key);
      if (value === null) return null;
      await kv.delete(key);
      const [iv, tag, sealed] = value.split('.').map((part) => Buffer.from(part, 'base64url'));
      if (!iv || !tag || !sealed) return null;
      try {
        const decipher = createDecipheriv('aes-256-gcm', digest('flash-key', sessionId), iv);
        decipher.setAuthTag(tag);
        const text = Buffer.concat([decipher.update(sealed), decipher.final()]).toString('utf8');
        return JSON.parse(text) as Flash;
      } catch {
        // Not sealed with this session's key: nothing to show.
        return null;
      }
    },
  };
}
