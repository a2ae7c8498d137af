/**
 * API key format, generation and hashing. Keys are `sxk_v1_` + 32 characters of [A-Za-z0-9]
 * (39 in total). Only HMAC-SHA-256(pepper, key) is stored. The format is checked before any
 * hashing or lookup, so garbage never reaches the store and never costs a round trip.
 */
import { createHash, createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';

const API_KEY_PREFIX = 'sxk_v1_';
const API_KEY_RANDOM_LENGTH = 32;
export const API_KEY_LENGTH = API_KEY_PREFIX.length + API_KEY_RANDOM_LENGTH;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const KEY_PATTERN = /^sxk_v1_[A-Za-z0-9]{32}$/;

/** 32 crypto-random characters; randomInt is uniform (no modulo bias). */
export function generateApiKey(): string {
  let out = API_KEY_PREFIX;
  for (let i = 0; i < API_KEY_RANDOM_LENGTH; i += 1) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

/** Cheap structural check; anything else is rejected as UNAUTHORIZED without a lookup. */
export function isWellFormedApiKey(value: unknown): value is string {
  return typeof value === 'string' && value.length === API_KEY_LENGTH && KEY_PATTERN.test(value);
}

export function hashApiKey(apiKey: string, pepper: string): string {
  return createHmac('sha256', pepper).update(apiKey, 'utf8').digest('base64url');
}

/**
 * hashApiKey for the requests of one process, remembered per key: an HMAC per request was a
 * measurable part of a cached extract's CPU (in a profile), and the same few keys arrive
 * again and again. The hash of a key never changes (revocation is the key cache's business, by
 * hash), so entries need no expiry; the least recently used goes first past `maxEntries`. The keys
 * of recent requests stay in this process's memory, as they do in its socket buffers.
 */
export function rememberingKeyHasher(pepper: string, maxEntries = 10_000): (apiKey: string) => string {
  const hashes = new LRUCache<string, string>({ max: maxEntries });
  return (apiKey) => {
    let hash = hashes.get(apiKey);
    if (hash === undefined) {
      hash = hashApiKey(apiKey, pepper);
      hashes.set(apiKey, hash);
    }
    return hash;
  };
}

/** What may be shown about a key after creation. */
export function keyDisplay(apiKey: string): { prefix: string; last4: string } {
  return { prefix: API_KEY_PREFIX, last4: apiKey.slice(-4) };
}

/**
 * Constant-time string equality: both sides are hashed first so that neither the content nor
 * the length of the secret influences the comparison time.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb);
}
