/**
 * The first API key after an install, as the README and the chart's notes give it: `subx-admin`
 * inside the gateway's container of the compose stack prints a key that works at once.
 */
import { describe, expect, it } from 'vitest';
import { api, compose } from './stack.ts';

describe('subx-admin in the gateway container', () => {
  it('create-account prints a working key (alone on stdout); bad usage exits 2', async () => {
    const created = await compose(
      ['exec', '-T', 'gateway', 'subx-admin', 'create-account', '--tier', 'pro'],
      60_000,
    );
    const key = created.stdout.trim();
    expect(key).toMatch(/^sxk_v1_[A-Za-z0-9]{32}$/);
    expect(created.stderr).toMatch(/account acct_[0-9a-f]{32} \(pro,/);
    const account = await api('/api/v1/account', undefined, { 'x-api-key': key });
    expect(account.status, JSON.stringify(account.json)).toBe(200);
    expect(account.json).toMatchObject({ tier: 'pro' });
    await expect(compose(['exec', '-T', 'gateway', 'subx-admin', 'create-acount'], 60_000)).rejects.toThrow(
      /failed \(2\)[\s\S]*unknown command 'create-acount'/,
    );
  });
});
