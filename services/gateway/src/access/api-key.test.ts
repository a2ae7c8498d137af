import { describe, expect, it } from 'vitest';
import {
  API_KEY_LENGTH,
  constantTimeEqual,
  generateApiKey,
  hashApiKey,
  isWellFormedApiKey,
  rememberingKeyHasher,
} from './api-key.ts';

describe('api keys', () => {
  it('generates sxk_v1_ + 32 alphanumerics, 39 characters, all different', () => {
    const keys = new Set<string>();
    for (let i = 0; i < 500; i += 1) {
      const key = generateApiKey();
      expect(key).toMatch(/^sxk_v1_[A-Za-z0-9]{32}$/);
      expect(key).toHaveLength(39);
      keys.add(key);
    }
    expect(keys.size).toBe(500);
    expect(API_KEY_LENGTH).toBe(39);
  });

  it('uses the whole alphabet (not a hex or base64 subset)', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i += 1) for (const c of generateApiKey().slice(7)) seen.add(c);
    expect(seen.size).toBe(62);
  });

  it('rejects anything that is not exactly the format', () => {
    const good = generateApiKey();
    expect(isWellFormedApiKey(good)).toBe(true);
    const bad: unknown[] = [
      undefined,
      null,
      42,
      [good],
      '',
      'sxk_v1_',
      good.slice(0, -1),
      `${good}a`,
      `sxk_v2_${good.slice(7)}`,
      `${good.slice(0, 38)}-`,
      `${good.slice(0, 38)}\n`,
      `${good.slice(0, 37)}\r\n`,
      `${good.slice(0, 38)}é`,
      `${good.slice(0, 38)}\uD800`,
      ` ${good.slice(1)}`,
      'x'.repeat(100_000),
    ];
    for (const value of bad) expect(isWellFormedApiKey(value)).toBe(false);
  });

  it('hashes with the pepper (HMAC): different peppers, different hashes; never the key itself', () => {
    const key = generateApiKey();
    const a = hashApiKey(key, 'pepper-one-pepper-one-pepper-one');
    const b = hashApiKey(key, 'pepper-two-pepper-two-pepper-two');
    expect(a).not.toBe(b);
    expect(a).toBe(hashApiKey(key, 'pepper-one-pepper-one-pepper-one'));
    expect(a).not.toContain(key.slice(7));
  });

  it('compares secrets of any length', () => {
    expect(constantTimeEqual('token', 'token')).toBe(true);
    expect(constantTimeEqual('token', 'token2')).toBe(false);
    expect(constantTimeEqual('', 'x')).toBe(false);
  });

  it('remembers hashes per key: the same HMAC as hashApiKey, also past its bound and after eviction', () => {
    const hasher = rememberingKeyHasher('pepper-1', 3);
    const keys = Array.from({ length: 8 }, () => generateApiKey());
    for (const round of [1, 2]) {
      for (const key of keys) expect(hasher(key), `round ${round}`).toBe(hashApiKey(key, 'pepper-1'));
    }
    expect(rememberingKeyHasher('pepper-2')(keys[0]!)).not.toBe(hasher(keys[0]!));
  });
});
