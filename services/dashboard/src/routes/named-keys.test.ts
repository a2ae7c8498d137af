/**
 * Named keys through the keys page, on the fake admin API of test/support.ts (which enforces the
 * gateway's rules): made with CSRF, shown once after the redirect, listed, revoked behind a ticked
 * box; what the gateway refuses is said on the page with the form filled in again, never a 500.
 */
import { describe, expect, it } from 'vitest';
import { signedInDashboard } from '../../test/support.ts';
import { primaryKeyId } from '../../test/named-keys-support.ts';
import { endOfDayUtc, namedKeyRequest } from './named-keys.ts';

const newKeyOf = (body: string) => /<code id="new-named-key" class="key">([^<]+)<\/code>/.exec(body)?.[1];
const rowOf = (body: string, id: string) =>
  new RegExp(`<tr data-key-id="${id}">[\\s\\S]*?</tr>`).exec(body)?.[0] ?? '';
const noticeOf = (body: string) => /<p class="notice (ok|error)"[^>]*>([^<]*)<\/p>/.exec(body)?.slice(1, 3);

describe('reading the form', () => {
  it('expires at the end of the chosen day in UTC, and only on a calendar date', () => {
    expect(endOfDayUtc('2026-12-01')).toBe('2026-12-02T00:00:00.000Z');
    expect(endOfDayUtc('2026-12-31')).toBe('2027-01-01T00:00:00.000Z');
    for (const day of ['2026-02-31', '2026-13-01', '1 Dec 2026', '']) expect(endOfDayUtc(day)).toBeNull();
  });

  it('turns the ticked scopes and the lines of networks into the admin API body', () => {
    const parsed = namedKeyRequest({
      name: '  CI  ',
      'scope:jobs': 'yes',
      'scope:transcripts:read': 'yes',
      'scope:ai': 'no',
      expires_on: '2026-12-01',
      allowed_networks: '203.0.113.0/24\r\n\n  2001:db8::/32 \n203.0.113.0/24',
    });
    expect(parsed).toMatchObject({
      body: {
        name: 'CI',
        scopes: ['transcripts:read', 'jobs'],
        expires_at: '2026-12-02T00:00:00.000Z',
        allowed_cidrs: ['203.0.113.0/24', '2001:db8::/32'],
      },
    });
    expect(namedKeyRequest({ name: 'x', 'scope:ai': 'yes' })).toEqual({
      body: { name: 'x', scopes: ['ai'] },
      form: { name: 'x', scopes: ['ai'], expiresOn: '', networks: '' },
    });
    expect(namedKeyRequest({ name: ' ', 'scope:ai': 'yes' })).toHaveProperty('problem');
    expect(namedKeyRequest({ name: 'x' })).toHaveProperty('problem', 'Tick at least one scope.');
    expect(namedKeyRequest({ name: 'x', 'scope:ai': 'yes', expires_on: '2026-02-30' })).toHaveProperty(
      'problem',
    );
  });
});

describe('named keys on the keys page', () => {
  it('makes a key with one scope, shows it once, lists it, revokes it; the audit log has both', async () => {
    const { app, b, gateway, accountId } = await signedInDashboard('named@example.com');
    const page = await b.get('/keys');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('id="no-named-keys"');

    // Without the session's CSRF token nothing is made.
    const forged = await b.post(
      '/keys/named',
      { name: 'CI', 'scope:transcripts:read': 'yes' },
      { csrf: null },
    );
    expect(forged.statusCode).toBe(403);
    expect(gateway.namedKeys.get(accountId)).toBeUndefined();

    await b.get('/keys');
    const expiresOn = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
    const made = await b.post('/keys/named', {
      name: 'CI pipeline',
      'scope:transcripts:read': 'yes',
      expires_on: expiresOn,
      allowed_networks: '203.0.113.0/24',
    });
    // POST-redirect-GET: the key only crosses the redirect in the sealed flash.
    expect(made.statusCode).toBe(303);
    expect(made.headers.location).toBe('/keys');
    expect(made.body).not.toMatch(/sxk_v1_/);
    const stored = gateway.namedKeys.get(accountId)!;
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({
      name: 'CI pipeline',
      scopes: ['transcripts:read'],
      expires_at: endOfDayUtc(expiresOn),
      allowed_cidrs: ['203.0.113.0/24'],
      status: 'active',
    });
    const keyId = stored[0]!.id;

    const shown = await b.get('/keys');
    const apiKey = newKeyOf(shown.body)!;
    expect(apiKey).toMatch(/^sxk_v1_[A-Za-z0-9]{32}$/);
    expect(apiKey.slice(-4)).toBe(stored[0]!.last4);
    expect(noticeOf(shown.body)).toEqual(['ok', 'The key “CI pipeline” is ready.']);
    expect(rowOf(shown.body, keyId)).toContain('status-active');
    const again = await b.get('/keys');
    expect(again.body).not.toContain(apiKey);
    expect(rowOf(again.body, keyId)).toContain('<code>transcripts:read</code>');
    expect(rowOf(again.body, keyId)).toContain('<code>203.0.113.0/24</code>');

    // Revoke: the box must be ticked.
    const unticked = await b.post(`/keys/named/${keyId}/revoke`, {});
    expect(unticked.statusCode).toBe(400);
    expect(noticeOf(unticked.body)).toEqual(['error', 'Tick the box to confirm.']);
    expect(gateway.namedKeys.get(accountId)![0]!.status).toBe('active');
    const revoked = await b.post(`/keys/named/${keyId}/revoke`, { confirm: 'yes' });
    expect(revoked.statusCode).toBe(303);
    const after = await b.get('/keys');
    expect(noticeOf(after.body)?.[1]).toContain('“CI pipeline” is revoked');
    expect(rowOf(after.body, keyId)).toContain('class="status-revoked">revoked<');
    expect(rowOf(after.body, keyId)).not.toContain('<form');

    // The person is the actor of both changes in the account's audit log.
    const log = gateway.auditEvents.get(accountId)!.filter((e) => e.action.startsWith('key.'));
    expect(log.map((e) => [e.action, e.target?.id])).toEqual([
      ['key.created', keyId],
      ['key.revoked', keyId],
    ]);
    expect(new Set(log.map((e) => e.actor.type))).toEqual(new Set(['member']));
    expect(log[0]!.actor.id).toMatch(/\S/);
    await app.close();
  });

  it('says what the gateway refuses (400 with its reason, 409) and fills the form in again', async () => {
    const { app, b, gateway, accountId } = await signedInDashboard('refused@example.com');
    await b.get('/keys');
    const badNetwork = await b.post('/keys/named', {
      name: 'Office',
      'scope:jobs': 'yes',
      allowed_networks: '10.0.0.0/8\nnot-a-network',
    });
    expect(badNetwork.statusCode).toBe(400);
    expect(noticeOf(badNetwork.body)?.[0]).toBe('error');
    expect(badNetwork.body).toContain(
      'The key was not made: allowed_cidrs: &quot;not-a-network&quot; is not an IPv4',
    );
    expect(badNetwork.body).toContain('value="Office"');
    expect(badNetwork.body).toMatch(/name="scope:jobs"\s+value="yes"\s+checked/);
    expect(badNetwork.body).toContain('10.0.0.0/8\nnot-a-network</textarea>');

    const past = await b.post('/keys/named', { name: 'Old', 'scope:ai': 'yes', expires_on: '2001-01-01' });
    expect(past.statusCode).toBe(400);
    expect(past.body).toContain('The key was not made: expires_at: must be in the future.');

    const noScope = await b.post('/keys/named', { name: 'Nothing' });
    expect(noScope.statusCode).toBe(400);
    expect(noticeOf(noScope.body)).toEqual(['error', 'Tick at least one scope.']);
    expect(gateway.namedKeys.get(accountId)).toBeUndefined();

    // The most active keys an account may hold: the next one is refused (400), said on the page.
    for (let i = 0; i < 50; i++) {
      await gateway.client.createKey(accountId, { name: `k${i}`, scopes: ['ai'] }, 'test');
    }
    const tooMany = await b.post('/keys/named', { name: 'One more', 'scope:ai': 'yes' });
    expect(tooMany.statusCode).toBe(400);
    expect(noticeOf(tooMany.body)?.[1]).toContain('The key was not made: The account has 50 active keys');

    // The primary key is not revoked here (400), and an unknown key is 404: both said on the page.
    const account = gateway.accounts.get(accountId)!;
    const primaryBefore = structuredClone(account.key);
    const primary = await b.post(`/keys/named/${encodeURIComponent(primaryKeyId(account))}/revoke`, {
      confirm: 'yes',
    });
    expect(primary.statusCode).toBe(400);
    expect(noticeOf(primary.body)?.[1]).toContain('The key was not revoked: The primary key is replaced');
    expect(account.key).toEqual(primaryBefore);
    const unknown = await b.post('/keys/named/key_nope/revoke', { confirm: 'yes' });
    expect(unknown.statusCode).toBe(404);
    expect(noticeOf(unknown.body)).toEqual(['error', 'This account has no key key_nope.']);
    await app.close();
  });

  it('still shows the page when the gateway cannot list the keys', async () => {
    const { app, b, gateway } = await signedInDashboard('nolist@example.com');
    gateway.client.listKeys = () => Promise.reject(new Error('older gateway'));
    const page = await b.get('/keys');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('id="named-keys-unavailable"');
    // The primary key's part of the page is unaffected.
    expect(page.body).toContain('Generate API Key');
    await app.close();
  });
});
