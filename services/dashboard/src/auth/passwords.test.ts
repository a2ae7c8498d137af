import { describe, expect, it } from 'vitest';
import { loadDashboardConfig } from '../config.ts';
import { hashPassword, needsRehash, verifyPassword } from './passwords.ts';

const PASSWORD = 'correct horse battery staple';

describe('passwords', () => {
  it('hashes with scrypt at the production cost and verifies it', async () => {
    const n = loadDashboardConfig({ ADMIN_TOKEN: 'passwords-test-admin-token-0123' }).PASSWORD_SCRYPT_N;
    const hash = await hashPassword(PASSWORD, n);
    expect(hash).toMatch(/^scrypt\$32768\$8\$3\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{86}$/);
    expect(await verifyPassword(PASSWORD, hash)).toBe(true);
  });

  it('salts every hash, verifies in constant time, and asks for a rehash below the configured cost', async () => {
    const hash = await hashPassword(PASSWORD, 1_024);
    expect(await verifyPassword(`${PASSWORD}x`, hash)).toBe(false);
    expect(await verifyPassword(PASSWORD, 'not-a-hash')).toBe(false);
    expect(await hashPassword(PASSWORD, 1_024)).not.toBe(hash);
    expect(needsRehash(hash, 1_024)).toBe(false);
    expect(needsRehash(hash, 2_048)).toBe(true);
  });
});
