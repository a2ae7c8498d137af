/**
 * The operator role needs a confirmed address (both ways of getting it),
 * operators enter their password again before operator pages and actions (step-up), and every
 * grant and operator action is an audit event without secrets.
 */
import { describe, expect, it } from 'vitest';
import { USERS_COLLECTION } from './users.ts';
import type { UserDoc } from './users.ts';
import { Browserish, TEST_ADMIN_TOKEN, buildTestDashboard } from '../../test/support.ts';

const PASSWORD = 'operator passphrase 1234';
const OWNER_PASSWORD = 'the owner keeps this one';
const TEN_MINUTES = 10 * 60_000;

const auditLines = (logs: string[]) =>
  logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.audit === true);

describe('operator role', () => {
  it('is not granted to an unconfirmed address, neither from OPERATOR_EMAILS nor from the stored flag', async () => {
    const { app, mail, store } = await buildTestDashboard({ OPERATOR_EMAILS: 'boss@example.com' });
    const squatter = new Browserish(app, '203.0.113.9');
    await squatter.get('/sign-up');
    await squatter.post('/sign-up', { email: 'boss@example.com', password: PASSWORD });
    await squatter.get('/sign-in');
    expect(
      (await squatter.post('/sign-in', { email: 'boss@example.com', password: PASSWORD })).statusCode,
    ).toBe(303);
    const denied = await squatter.get('/operators');
    expect(denied.statusCode).toBe(403);
    expect(denied.body).not.toContain('table class="accounts"');
    expect((await squatter.get('/keys')).body).not.toContain('href="/operators"');

    // The promotion API refuses an unconfirmed address, and a stored flag alone grants nothing.
    const promote = await app.inject({
      method: 'PUT',
      url: '/admin/operators/boss@example.com',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      payload: { operator: true },
    });
    expect(promote.statusCode).toBe(409);
    expect(promote.json()).toMatchObject({ error: { code: 'EMAIL_NOT_CONFIRMED' } });
    await store
      .collection<UserDoc>(USERS_COLLECTION)
      .updateOne({ email: 'boss@example.com' }, { $set: { operator: true } });
    expect((await squatter.get('/operators')).statusCode).toBe(403);

    // The owner reads the mailed link: the squatter's password is not theirs, so they choose their
    // own; the role is theirs, and the squatter's password and session are gone.
    const owner = new Browserish(app);
    const link = new URL(mail.link('boss@example.com', 'verify'));
    await owner.get(`${link.pathname}${link.search}`);
    const token = link.searchParams.get('token')!;
    expect((await owner.post('/verify', { token, password: OWNER_PASSWORD })).statusCode).toBe(400);
    expect((await owner.post('/verify', { token, new_password: OWNER_PASSWORD })).body).toContain(
      'Email confirmed',
    );
    await owner.get('/sign-in');
    await owner.post('/sign-in', { email: 'boss@example.com', password: OWNER_PASSWORD });
    expect((await owner.get('/operators')).statusCode).toBe(200);
    expect((await squatter.get('/operators')).statusCode).toBe(303);
    await squatter.get('/sign-in');
    expect(
      (await squatter.post('/sign-in', { email: 'boss@example.com', password: PASSWORD })).statusCode,
    ).toBe(401);
    await app.close();
  });
});

describe('operator step-up', () => {
  it('asks for the password again after 10 minutes, before pages and actions, keeping CSRF', async () => {
    const { app, mail, gateway, clock } = await buildTestDashboard({ OPERATOR_EMAILS: 'boss@example.com' });
    const user = new Browserish(app, '198.51.100.20');
    await user.signUpVerified(mail, 'user@example.com', PASSWORD);
    await user.get('/keys');
    await user.post('/keys/generate', {});
    const id = [...gateway.accounts.values()].find((a) => a.email === 'user@example.com')!.account_id;

    const boss = new Browserish(app);
    await boss.signUpVerified(mail, 'boss@example.com', PASSWORD);
    expect((await boss.get('/operators')).statusCode).toBe(200); // sign-in counts as entering it
    clock.advance(TEN_MINUTES + 1);
    const stale = await boss.get('/operators?page=1');
    expect(stale.statusCode).toBe(303);
    expect(stale.headers.location).toBe('/reauth?next=%2Foperators%3Fpage%3D1');
    await boss.get('/keys');
    const action = await boss.post(`/operators/accounts/${id}`, { tier: 'pro', add_credits: '5' });
    expect(action.statusCode).toBe(303);
    expect(action.headers.location).toMatch(/^\/reauth\?next=/);
    expect(gateway.accounts.get(id)!.tier).toBe('free');

    const form = await boss.get('/reauth?next=https://evil.example/');
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('name="next" value="/operators"');
    expect(
      (await boss.post('/reauth', { password: PASSWORD, next: '/operators' }, { csrf: null })).statusCode,
    ).toBe(403);
    await boss.get('/reauth');
    expect((await boss.post('/reauth', { password: 'not my password', next: '/operators' })).statusCode).toBe(
      401,
    );
    const ok = await boss.post('/reauth', { password: PASSWORD, next: '/operators' });
    expect(ok.statusCode).toBe(303);
    expect(ok.headers.location).toBe('/operators');
    await boss.get('/operators');
    expect((await boss.post(`/operators/accounts/${id}`, { tier: 'pro', add_credits: '5' })).statusCode).toBe(
      200,
    );
    expect(gateway.accounts.get(id)!.tier).toBe('pro');
    await app.close();
  });
});

describe('operator audit events', () => {
  it('logs every grant and action with who, what and which account, and no secrets', async () => {
    const { app, mail, gateway, logs } = await buildTestDashboard({ OPERATOR_EMAILS: 'boss@example.com' });
    const user = new Browserish(app, '198.51.100.21');
    await user.signUpVerified(mail, 'user@example.com', PASSWORD);
    await user.get('/keys');
    await user.post('/keys/generate', {});
    const apiKey = [...gateway.keys.values()][0]!;
    const id = [...gateway.accounts.values()].find((a) => a.email === 'user@example.com')!.account_id;

    const boss = new Browserish(app);
    await boss.signUpVerified(mail, 'boss@example.com', PASSWORD);
    await boss.get('/operators');
    await boss.post(`/operators/accounts/${id}`, { tier: 'business', add_credits: '7' });
    await boss.get('/operators');
    const secretBefore = (await gateway.client.webhookSecret(id)).secret;
    const revoked = await boss.post(`/operators/accounts/${id}/revoke`, {});
    // A revocation by an operator is one for compromise: the webhook secret goes with the key.
    expect(revoked.body).toContain('webhook secret replaced');
    expect(gateway.accounts.get(id)!.key.status).toBe('revoked');
    expect(gateway.secrets.get(id)!.current.secret).not.toBe(secretBefore);
    expect(gateway.secrets.get(id)!.previous).toBeNull();
    await app.inject({
      method: 'PUT',
      url: '/admin/operators/user@example.com',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      payload: { operator: true },
    });

    const events = auditLines(logs);
    const bossId = events.find((e) => e.event === 'operator.account_updated')?.actor as { user_id?: string };
    expect(bossId?.user_id).toMatch(/^usr_/);
    expect(events).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          event: 'operator.granted',
          actor: { config: 'OPERATOR_EMAILS' },
          target: expect.objectContaining({ email: 'boss@example.com' }),
        }),
        expect.objectContaining({
          event: 'operator.account_updated',
          actor: { email: 'boss@example.com', user_id: bossId.user_id },
          target: { account_id: id },
          details: { tier: 'business', add_credits: 7 },
        }),
        expect.objectContaining({
          event: 'operator.key_revoked',
          actor: { email: 'boss@example.com', user_id: bossId.user_id },
          target: { account_id: id },
          details: { watches_paused: 0, jobs_canceled: 0 },
        }),
        expect.objectContaining({
          event: 'operator.granted',
          actor: { admin_token: true },
          target: expect.objectContaining({ email: 'user@example.com', account_id: id }),
        }),
      ]),
    );
    const text = JSON.stringify(events);
    for (const secret of [PASSWORD, TEST_ADMIN_TOKEN, apiKey, boss.cookie.split('=')[1]!]) {
      expect(text).not.toContain(secret);
    }
    await app.close();
  });
});

describe('the promotion API token check', () => {
  it('refuses wrong tokens of any length alike, then locks the network out for the window', async () => {
    const { app, clock } = await buildTestDashboard();
    const put = (token: string, ip = '203.0.113.77') =>
      app.inject({
        method: 'PUT',
        url: '/admin/operators/nobody@example.com',
        remoteAddress: ip,
        headers: { authorization: `Bearer ${token}` },
        payload: { operator: true },
      });
    const wrong = ['x', TEST_ADMIN_TOKEN.slice(0, -1), `${TEST_ADMIN_TOKEN}x`, 'y'.repeat(4_000)];
    for (let i = 0; i < 10; i++) expect((await put(wrong[i % wrong.length]!)).statusCode).toBe(401);
    const locked = await put(TEST_ADMIN_TOKEN);
    expect(locked.statusCode).toBe(429);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    // Another network is not locked out: the right token works there.
    expect((await put(TEST_ADMIN_TOKEN, '192.0.2.77')).statusCode).toBe(404);
    clock.advance(15 * 60_000);
    expect((await put(TEST_ADMIN_TOKEN)).statusCode).toBe(404);
    await app.close();
  });
});

describe('the promotion API across an admin token rotation', () => {
  it('accepts the new and the previous token while ADMIN_TOKEN_PREVIOUS is set, nothing else', async () => {
    const NEW = 'rotated-admin-token-0123456789abcdefgh';
    const { app } = await buildTestDashboard({ ADMIN_TOKEN: NEW, ADMIN_TOKEN_PREVIOUS: TEST_ADMIN_TOKEN });
    const promote = (token: string) =>
      app.inject({
        method: 'PUT',
        url: '/admin/operators/nobody@example.com',
        headers: { authorization: `Bearer ${token}` },
        payload: { operator: true },
      });
    // Accepted tokens get past the check to the lookup of the address (nobody has it): 404.
    expect((await promote(NEW)).statusCode).toBe(404);
    expect((await promote(TEST_ADMIN_TOKEN)).statusCode).toBe(404);
    expect((await promote(`${NEW}x`)).statusCode).toBe(401);
  });
});
