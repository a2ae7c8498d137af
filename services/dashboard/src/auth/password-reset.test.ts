/**
 * A password reset takes the account back from whoever held the old password: every session ends
 * and the API key they may have made is replaced, the new one shown once on the page that follows;
 * the webhook secret is replaced with no grace, and the watches and jobs the old key made are
 * stopped and listed for the owner.
 */
import { describe, expect, it } from 'vitest';
import { Browserish, buildTestDashboard } from '../../test/support.ts';

const OLD_PASSWORD = 'the password that leaked';
const NEW_PASSWORD = 'the one only the owner knows';

const pathOf = (link: string) => {
  const url = new URL(link);
  return { path: `${url.pathname}${url.search}`, token: url.searchParams.get('token')! };
};

describe('password reset', () => {
  it('replaces the key made before it, shows the new one once and ends every session', async () => {
    const { app, mail, gateway } = await buildTestDashboard();
    const holder = new Browserish(app, '203.0.113.30');
    await holder.signUpVerified(mail, 'shared@example.com', OLD_PASSWORD);
    await holder.get('/keys');
    await holder.post('/keys/generate', {});
    const accountId = [...gateway.accounts.values()].find(
      (a) => a.email === 'shared@example.com',
    )!.account_id;
    const oldKey = gateway.keys.get(accountId)!;
    expect(oldKey).toBeTruthy();

    const owner = new Browserish(app, '192.0.2.30');
    await owner.get('/forgot');
    await owner.post('/forgot', { email: 'shared@example.com' });
    const link = pathOf(mail.link('shared@example.com', 'reset'));
    await owner.get(link.path);
    const done = await owner.post('/reset', { token: link.token, password: NEW_PASSWORD });
    expect(done.statusCode).toBe(200);
    const newKey = gateway.keys.get(accountId)!;
    expect(newKey).not.toBe(oldKey);
    expect(done.body).toContain(newKey);
    expect(done.body).toContain('every session is signed out');
    expect(done.headers['cache-control']).toBe('no-store');

    expect((await holder.get('/keys')).headers.location).toBe('/sign-in');
    await holder.get('/sign-in');
    expect(
      (await holder.post('/sign-in', { email: 'shared@example.com', password: OLD_PASSWORD })).statusCode,
    ).toBe(401);
    // The page is the response of the POST: reloading the link shows no key.
    expect((await owner.get(link.path)).body).not.toContain(newKey);
    await app.close();
  });

  it('replaces the webhook secret (the old one no longer listed) and lists the paused watches', async () => {
    const { app, mail, gateway } = await buildTestDashboard();
    const holder = new Browserish(app, '203.0.113.33');
    await holder.signUpVerified(mail, 'hooks@example.com', OLD_PASSWORD);
    const accountId = [...gateway.accounts.values()].find((a) => a.email === 'hooks@example.com')!.account_id;
    await holder.get('/webhooks');
    const oldSecret = (await gateway.client.webhookSecret(accountId)).secret;
    gateway.watches.set(accountId, [
      {
        watch_id: 'wat_intruder',
        source: { type: 'playlist', url: 'https://www.youtube.com/playlist?list=PLx' },
        interval_minutes: 60,
        webhook_url: 'https://intruder.example/hook',
        created_at: '2026-11-26T10:00:00.000Z',
        next_run_at: '2026-11-26T12:00:00.000Z',
        runs: 1,
        paused: null,
        last_run: null,
      },
    ]);

    const owner = new Browserish(app, '192.0.2.33');
    await owner.get('/forgot');
    await owner.post('/forgot', { email: 'hooks@example.com' });
    const link = pathOf(mail.link('hooks@example.com', 'reset'));
    await owner.get(link.path);
    const done = await owner.post('/reset', { token: link.token, password: NEW_PASSWORD });
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain('webhook signing secret was replaced');
    expect(done.body).toContain('<code>wat_intruder</code>');

    await owner.get('/sign-in');
    await owner.post('/sign-in', { email: 'hooks@example.com', password: NEW_PASSWORD });
    const page = await owner.get('/webhooks');
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain(oldSecret);
    expect(page.body).toContain(gateway.secrets.get(accountId)!.current.secret);
    const watches = await owner.get('/watches');
    expect(watches.body).toContain('id="paused-watches"');
    expect(watches.body).toContain('/watches/wat_intruder/resume');
    await app.close();
  });

  it('leaves a revoked key revoked (a reset makes no key where there was none)', async () => {
    const { app, mail, gateway } = await buildTestDashboard();
    const b = new Browserish(app);
    await b.signUpVerified(mail, 'nokey@example.com', OLD_PASSWORD);
    await b.get('/forgot');
    await b.post('/forgot', { email: 'nokey@example.com' });
    const link = pathOf(mail.link('nokey@example.com', 'reset'));
    await b.get(link.path);
    const done = await b.post('/reset', { token: link.token, password: NEW_PASSWORD });
    expect(done.body).toContain('Password changed');
    expect(done.body).not.toContain('new-key');
    expect(gateway.keys.size).toBe(0);
    await app.close();
  });

  it('keeps the link usable when the gateway cannot replace the key, and changes nothing', async () => {
    const { app, mail, gateway } = await buildTestDashboard();
    const b = new Browserish(app);
    await b.signUpVerified(mail, 'outage@example.com', OLD_PASSWORD);
    await b.get('/keys');
    await b.post('/keys/generate', {});
    await b.get('/forgot');
    await b.post('/forgot', { email: 'outage@example.com' });
    const link = pathOf(mail.link('outage@example.com', 'reset'));
    const secureAccount = gateway.client.secureAccount;
    gateway.client.secureAccount = () => Promise.reject(new Error('gateway down'));
    const other = new Browserish(app, '192.0.2.31');
    await other.get(link.path);
    expect((await other.post('/reset', { token: link.token, password: NEW_PASSWORD })).statusCode).toBe(500);
    gateway.client.secureAccount = secureAccount;
    await other.get('/sign-in');
    expect(
      (await other.post('/sign-in', { email: 'outage@example.com', password: OLD_PASSWORD })).statusCode,
    ).toBe(303);
    const again = new Browserish(app, '192.0.2.32');
    await again.get(link.path);
    expect((await again.post('/reset', { token: link.token, password: NEW_PASSWORD })).statusCode).toBe(200);
    await app.close();
  });
});

describe('addresses', () => {
  it('refuses forms that reach one inbox under another spelling', async () => {
    const { app, mail } = await buildTestDashboard();
    for (const email of ['v@x.com(1)', '"v"@x.com', 'v@[127.0.0.1]', 'v(c)@x.com', 'a,b@x.com']) {
      const b = new Browserish(app, '198.51.100.7');
      await b.get('/sign-up');
      expect((await b.post('/sign-up', { email, password: OLD_PASSWORD })).statusCode).toBe(400);
    }
    expect(mail.sent).toHaveLength(0);
    const b = new Browserish(app, '198.51.100.8');
    await b.get('/sign-up');
    expect(
      (await b.post('/sign-up', { email: "o'brien+tag@mail.example.co", password: OLD_PASSWORD })).statusCode,
    ).toBe(200);
    await app.close();
  });
});
