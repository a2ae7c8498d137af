/**
 * Idempotency-Key handling on the KeyValueStore: a retried request with the same key (same
 * account, same method + path + body) gets the first response replayed for 24 h and is not
 * charged again. The claim is one atomic SET NX, so two concurrent retries cannot both run.
 */
import { createHash } from 'node:crypto';
import { Errors } from '@subx/errors';
import type { KeyValueStore } from '@subx/ports';
import type { IdempotencyClaim, IdempotencyStore, StoredResponse } from './types.ts';

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** 1 to 255 visible ASCII characters (anything else: 400 INVALID_REQUEST). */
export function isValidIdempotencyKey(value: unknown): value is string {
  return typeof value === 'string' && KEY_PATTERN.test(value);
}

type Entry =
  | { state: 'in_progress'; fingerprint: string }
  | { state: 'done'; fingerprint: string; response: StoredResponse };

export function createIdempotencyStore(deps: {
  kv: KeyValueStore;
  /** How long a completed response is replayed. Default 24 h. */
  retentionMs?: number;
  /** A claim whose request never completed (crash) frees itself after this. Default 10 min. */
  inProgressTtlMs?: number;
}): IdempotencyStore {
  const { kv } = deps;
  const retentionMs = deps.retentionMs ?? 86_400_000;
  const inProgressTtlMs = deps.inProgressTtlMs ?? 600_000;
  const kvKey = (accountId: string, key: string) =>
    `idem:${accountId}:${createHash('sha256').update(key).digest('base64url')}`;

  // The fingerprint of claims this process holds, in case the in-progress entry expired meanwhile.
  const claimed = new Map<string, string>();

  function check(key: string): void {
    if (!isValidIdempotencyKey(key)) {
      throw Errors.invalidRequest('Idempotency-Key must be 1 to 255 visible ASCII characters.');
    }
  }

  return {
    async claim(accountId, key, fingerprint): Promise<IdempotencyClaim> {
      check(key);
      const k = kvKey(accountId, key);
      const mine: Entry = { state: 'in_progress', fingerprint };
      for (let attempt = 0; attempt < 3; attempt += 1) {
        if (await kv.setIfAbsent(k, JSON.stringify(mine), { ttlMs: inProgressTtlMs })) {
          claimed.set(k, fingerprint);
          return { kind: 'new' };
        }
        const raw = await kv.get(k);
        if (raw === null) continue; // expired between the two calls: try to claim again
        const entry = JSON.parse(raw) as Entry;
        if (entry.fingerprint !== fingerprint) {
          throw Errors.invalidRequest(
            'This Idempotency-Key was already used with a different request (method, path or body).',
          );
        }
        return entry.state === 'done'
          ? { kind: 'replay', response: entry.response }
          : { kind: 'in_progress' };
      }
      return { kind: 'in_progress' };
    },

    async complete(accountId, key, response) {
      check(key);
      const k = kvKey(accountId, key);
      let fingerprint = claimed.get(k);
      claimed.delete(k);
      if (fingerprint === undefined) {
        const raw = await kv.get(k);
        if (raw === null) return;
        fingerprint = (JSON.parse(raw) as Entry).fingerprint;
      }
      const entry: Entry = { state: 'done', fingerprint, response };
      await kv.set(k, JSON.stringify(entry), { ttlMs: retentionMs });
    },

    async abandon(accountId, key) {
      check(key);
      const k = kvKey(accountId, key);
      claimed.delete(k);
      await kv.delete(k);
    },
  };
}
