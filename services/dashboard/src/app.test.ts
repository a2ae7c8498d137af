import { describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from './app.ts';
import { GatewayError } from './gateway/client.ts';
import { delayAfter } from './auth/sign-in-throttle.ts';
import { html, raw } from './views/html.ts';
import { curlFor } from './views/pages.ts';
import { Browserish, TEST_ADMIN_TOKEN, buildTestDashboard } from '../test/support.ts';

const PASSWORD = 'correct horse battery staple';

describe('html', () => {
  it('escapes interpolations unless they are Html', () => {
    expect(html`<p>${'<script>"&\''}</p>`.value).toBe('<p>&lt;script&gt;&quot;&amp;&#39;</p>');
    expect(html`<p>${raw('<b>')}${[1, html`<i>${'<'}</i>`]}${null}${false}</p>`.value).toBe(
      '<p><b>1<i>&lt;</i></p>',
    );
  });
});

describe('throttle delays', () => {
  it('grow from 1 s doubling after the free failures, capped at 15 min', () => {
    expect([3, 4, 5, 6, 7].map((n) => delayAfter(n, 3))).toEqual([0, 1_000, 2_000, 4_000, 8_000]);
    expect(delayAfter(100, 3)).toBe(900_000);
  });
});

describe('curl', () => {
  it('shows <API_KEY>, never a key, and quotes for the shell', () => {
    const extract = curlFor('http://api.test', {
      operation: 'extract',
      url: "https://youtu.be/a'b",
      format: 'srt',
      language: 'en',
    });
    expect(extract).toContain("-H 'X-API-Key: <API_KEY>'");
    expect(extract).toContain(`-d '{"url":"https://youtu.be/a'\\''b","format":"srt","language":"en"}'`);
    expect(
      curlFor('http://api.test', {
        operation: 'validate',
        url: 'https://youtu.be/x',
        format: 'json',
        language: '',
      }),
    ).toBe("curl -s 'http://api.test/api/v1/validate?url=https%3A%2F%2Fyoutu.be%2Fx'");
  });
});

describe('health', () => {
  it('is live, and ready while both stores answer', async () => {
    const { app, kv } = await buildTestDashboard();
    expect((await app.inject('/health/live')).json()).toEqual({ status: 'ok' });
    expect((await app.inject('/health/ready')).json()).toEqual({ status: 'ok', kv: true, store: true });
    await kv.close();
    const down = await app.inject('/health/ready');
    expect(down.statusCode).toBe(503);
    expect(down.json()).toMatchObject({ status: 'down', kv: false, store: true });
  });
});

describe('pages and sessions', () => {
  it('sends a strict CSP, no-store and HttpOnly SameSite cookies (Secure only over TLS)', async () => {
    const { app } = await buildTestDashboard();
    const b = new Browserish(app);
    const res = await b.get('/sign-in');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    expect(CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers['x-frame-options']).toBe('DENY');
    const cookie = String(res.headers['set-cookie']);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).not.toMatch(/Secure/);
    expect(res.body).not.toMatch(/<script(?![^>]*src="\/static\/app\.js")/);
    expect(res.body).not.toMatch(/ style=/);
    // X-Forwarded-Proto from an untrusted client is ignored.
    const spoofed = await new Browserish(app).get('/sign-in', { 'x-forwarded-proto': 'https' });
    expect(String(spoofed.headers['set-cookie'])).not.toMatch(/Secure/);
    await app.close();
  });

  it('marks cookies Secure behind a trusted TLS proxy', async () => {
    const { app } = await buildTestDashboard({ TRUST_PROXY: '198.51.100.7' });
    const res = await new Browserish(app).get('/sign-in', { 'x-forwarded-proto': 'https' });
    // Secure cookies carry the __Host- prefix.
    expect(String(res.headers['set-cookie'])).toMatch(/^__Host-subx_csrf=.*Secure/);
    const other = await new Browserish(app, '203.0.113.1').get('/sign-in', { 'x-forwarded-proto': 'https' });
    expect(String(other.headers['set-cookie'])).not.toMatch(/Secure/);
    await app.close();
  });

  it('refuses every state-changing form without the session’s CSRF token', async () => {
    const { app, mail } = await buildTestDashboard();
    const b = new Browserish(app);
    await b.signUpVerified(mail, 'csrf@example.com', PASSWORD);
    await b.get('/keys');
    const good = b.csrf();
    for (const path of [
      '/keys/generate',
      '/keys/regenerate',
      '/keys/revoke',
      '/playground',
      '/sign-out',
      '/sign-up',
      '/sign-in',
      '/forgot',
      '/reset',
      '/verify',
      '/verify/resend',
      '/operators/accounts/acct_x',
      '/webhooks/rotate',
    ]) {
      for (const csrf of [
        null,
        '',
        'x'.repeat(43),
        `${good.slice(0, -1)}${good.endsWith('A') ? 'B' : 'A'}`,
      ]) {
        const res = await b.post(path, { confirm: 'yes', email: 'a@b.cd', password: PASSWORD }, { csrf });
        expect(res.statusCode, `${path} ${csrf}`).toBe(403);
      }
    }
    // Another visitor's token does not work in this session.
    const other = new Browserish(app);
    await other.get('/sign-in');
    expect((await b.post('/keys/generate', {}, { csrf: other.csrf() })).statusCode).toBe(403);
    // the interface's words (docs/decisions.md "Dashboard wording"): "Generate API Key", "Regenerate Key"
    expect((await b.get('/keys')).body).toContain('Generate API Key');
    await app.close();
  });

  it('rotates the session id at sign-in and ends it at sign-out', async () => {
    const { app, mail } = await buildTestDashboard();
    const b = new Browserish(app);
    await b.signUpVerified(mail, 'rotate@example.com', PASSWORD);
    const signedIn = b.cookie;
    // Fixation: an anonymous session id from before sign-in is not the signed-in one.
    const fresh = new Browserish(app);
    await fresh.get('/sign-in');
    const anonymous = fresh.cookie;
    const res = await fresh.post('/sign-in', { email: 'rotate@example.com', password: PASSWORD });
    expect(res.statusCode).toBe(303);
    expect(fresh.cookie).not.toBe(anonymous);
    const stale = new Browserish(app);
    stale.cookie = anonymous;
    expect((await stale.get('/keys')).headers.location).toBe('/sign-in');
    expect((await fresh.get('/keys')).statusCode).toBe(200);
    await b.get('/keys');
    expect((await b.post('/sign-out', {})).headers.location).toBe('/sign-in');
    const after = new Browserish(app);
    after.cookie = signedIn;
    expect((await after.get('/keys')).headers.location).toBe('/sign-in');
    await app.close();
  });
});

describe('sign-up, verification and reset', () => {
  it('needs a verified email before a key, shows the key once, then prefix and last four', async () => {
    const { app, mail, gateway } = await buildTestDashboard();
    const b = new Browserish(app);
    await b.get('/sign-up');
    const signUp = await b.post('/sign-up', { email: 'Person@Example.com', password: PASSWORD });
    expect(signUp.body).toContain('Check your inbox');
    await b.get('/sign-in');
    expect((await b.post('/sign-in', { email: 'person@example.com', password: PASSWORD })).statusCode).toBe(
      303,
    );
    const keys = await b.get('/keys');
    expect(keys.body).toContain('Confirm your email address first');
    expect((await b.post('/keys/generate', {})).statusCode).toBe(403);
    expect(gateway.accounts.size).toBe(0);

    const link = new URL(mail.link('person@example.com', 'verify'));
    expect(link.origin).toBe('http://dash.test');
    // While the gateway is down the link is not used up.
    const createAccount = gateway.client.createAccount;
    gateway.client.createAccount = async () => {
      throw new GatewayError(503, 'UNAVAILABLE');
    };
    await b.get(`${link.pathname}${link.search}`);
    expect((await b.post('/verify', { token: link.searchParams.get('token')! })).statusCode).toBe(502);
    gateway.client.createAccount = createAccount;
    const confirm = await b.get(`${link.pathname}${link.search}`);
    expect(confirm.body).toContain('Confirm my email');
    expect((await b.post('/verify', { token: link.searchParams.get('token')! })).body).toContain(
      'Email confirmed',
    );
    // One-time: the same link again fails.
    await b.get('/keys');
    expect((await b.post('/verify', { token: link.searchParams.get('token')! })).statusCode).toBe(400);
    expect(gateway.accounts.size).toBe(1);
    const [account] = [...gateway.accounts.values()];
    expect(account!.key.status).toBe('revoked');
    expect(account!.email).toBe('person@example.com');

    await b.get('/keys');
    // POST-redirect-GET: the key is in neither the redirect nor its URL, and shown once after it.
    const generated = await b.post('/keys/generate', {});
    const key = gateway.keys.get(account!.account_id)!;
    expect(generated.statusCode).toBe(303);
    expect(generated.headers.location).toBe('/keys');
    expect(generated.body).not.toContain(key);
    const shown = await b.get('/keys');
    expect(shown.body).toContain(key);
    expect(shown.body).toContain('data-copy="new-key"');
    expect(shown.headers['cache-control']).toBe('no-store');
    const later = await b.get('/keys');
    expect(later.body).not.toContain(key);
    expect(later.body).toContain(`sxk_v1_…${key.slice(-4)}`);
    expect(later.body).toContain('>Regenerate Key</button>');

    // Regenerate needs the confirmation box.
    expect((await b.post('/keys/regenerate', {})).statusCode).toBe(400);
    await b.get('/keys');
    const regenerated = await b.post('/keys/regenerate', { confirm: 'yes' });
    const newKey = gateway.keys.get(account!.account_id)!;
    expect(newKey).not.toBe(key);
    expect(regenerated.statusCode).toBe(303);
    const regeneratedPage = await b.get('/keys');
    expect(regeneratedPage.body).toContain(newKey);
    expect(regeneratedPage.body).not.toContain(key);
    expect((await b.post('/keys/revoke', { confirm: 'yes' })).headers.location).toBe('/keys');
    expect((await b.get('/keys')).body).toContain('Your key is revoked');
    expect(gateway.accounts.get(account!.account_id)!.key.status).toBe('revoked');
    await app.close();
  });

  it('resets a password by the mailed link, ending every old session, and does not reveal who has an account', async () => {
    const { app, mail } = await buildTestDashboard();
    const b = new Browserish(app);
    await b.signUpVerified(mail, 'reset@example.com', PASSWORD);
    await b.get('/forgot');
    const unknown = await b.post('/forgot', { email: 'nobody@example.com' });
    await b.get('/forgot');
    const known = await b.post('/forgot', { email: 'reset@example.com' });
    expect(unknown.body).toBe(known.body);
    expect(mail.sent.filter((m) => m.to === 'nobody@example.com')).toHaveLength(0);
    const link = new URL(mail.link('reset@example.com', 'reset'));
    // A second request within the minute sends nothing (no inbox flooding), and says the same.
    await b.get('/forgot');
    expect((await b.post('/forgot', { email: 'reset@example.com' })).body).toBe(known.body);
    expect(mail.sent.filter((m) => m.to === 'reset@example.com' && m.subject.includes('Reset'))).toHaveLength(
      1,
    );
    const other = new Browserish(app);
    await other.get(`${link.pathname}${link.search}`);
    expect(
      (await other.post('/reset', { token: link.searchParams.get('token')!, password: 'short' })).statusCode,
    ).toBe(400);
    const done = await other.post('/reset', {
      token: link.searchParams.get('token')!,
      password: 'a brand new passphrase',
    });
    expect(done.body).toContain('Password changed');
    expect((await b.get('/keys')).headers.location).toBe('/sign-in');
    await b.get('/sign-in');
    expect((await b.post('/sign-in', { email: 'reset@example.com', password: PASSWORD })).statusCode).toBe(
      401,
    );
    await b.get('/sign-in');
    expect(
      (await b.post('/sign-in', { email: 'reset@example.com', password: 'a brand new passphrase' }))
        .statusCode,
    ).toBe(303);
    await other.get('/forgot');
    expect(
      (
        await other.post('/reset', {
          token: link.searchParams.get('token')!,
          password: 'yet another passphrase',
        })
      ).statusCode,
    ).toBe(400);
    await app.close();
  });
});

describe('sign-in throttling', () => {
  it('delays an email after 3 failures, growing, without checking the password while locked', async () => {
    const { app, mail, clock } = await buildTestDashboard();
    const b = new Browserish(app);
    await b.signUpVerified(mail, 'slow@example.com', PASSWORD);
    const attacker = new Browserish(app, '203.0.113.50');
    const attempt = async (password: string) => {
      await attacker.get('/sign-in');
      return attacker.post('/sign-in', { email: 'slow@example.com', password });
    };
    for (let i = 0; i < 3; i++) expect((await attempt('wrong password!')).statusCode).toBe(401);
    expect((await attempt('wrong password!')).statusCode).toBe(401); // 4th failure: 1 s lock starts
    const locked = await attempt(PASSWORD);
    expect(locked.statusCode).toBe(429);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // From another IP the email is locked too.
    const elsewhere = new Browserish(app, '192.0.2.9');
    await elsewhere.get('/sign-in');
    expect(
      (await elsewhere.post('/sign-in', { email: 'slow@example.com', password: PASSWORD })).statusCode,
    ).toBe(429);
    clock.advance(1_000);
    expect((await attempt('wrong password!')).statusCode).toBe(401); // 5th: 2 s
    const second = await attempt(PASSWORD);
    expect(second.statusCode).toBe(429);
    expect(Number(second.headers['retry-after'])).toBe(2);
    clock.advance(1_999);
    expect((await attempt(PASSWORD)).statusCode).toBe(429);
    clock.advance(1);
    expect((await attempt(PASSWORD)).statusCode).toBe(303);
  });

  it('throttles one IP across many emails', async () => {
    const { app } = await buildTestDashboard();
    const attacker = new Browserish(app, '203.0.113.77');
    let status = 0;
    for (let i = 0; i < 21; i++) {
      await attacker.get('/sign-in');
      status = (await attacker.post('/sign-in', { email: `n${i}@example.com`, password: 'whatever123' }))
        .statusCode;
    }
    expect(status).toBe(401);
    await attacker.get('/sign-in');
    expect(
      (await attacker.post('/sign-in', { email: 'fresh@example.com', password: 'whatever123' })).statusCode,
    ).toBe(429);
  });
});

describe('usage, playground, operators', () => {
  it('shows today against the limit with the reset time, a chart of 30 days, balance, allowance and tier', async () => {
    const { app, mail } = await buildTestDashboard();
    const b = new Browserish(app);
    await b.signUpVerified(mail, 'usage@example.com', PASSWORD);
    const res = await b.get('/usage');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain(
      'Resets at <time datetime="2026-03-16T00:00:00.000Z">16 Mar 2026, 00:00 UTC</time>',
    );
    expect(res.body).toMatch(/<progress max="100" value="0"/);
    expect(res.body).toMatch(/<svg\s+class="chart"/);
    expect((res.body.match(/<th scope="row">\s*\d{4}-\d\d-\d\d/g) ?? []).length).toBe(30);
    expect(res.body).toContain('Monthly allowance 50');
    expect(res.body).toMatch(/id="tier">free</);
  });

  it('runs the playground on behalf of the account and shows curl with <API_KEY>', async () => {
    const { app, mail, gateway } = await buildTestDashboard();
    const b = new Browserish(app);
    await b.signUpVerified(mail, 'play@example.com', PASSWORD);
    await b.get('/playground');
    expect(
      (
        await b.post('/playground', {
          operation: 'extract',
          url: 'https://youtu.be/dQw4w9WgXcQ',
          format: 'srt',
        })
      ).statusCode,
    ).toBe(409);
    await b.get('/keys');
    await b.post('/keys/generate', {});
    const key = [...gateway.keys.values()][0]!;
    await b.get('/playground');
    const res = await b.post('/playground', {
      operation: 'extract',
      url: 'https://youtu.be/dQw4w9WgXcQ',
      format: 'srt',
      language: 'en',
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('id="result-status">200<');
    expect(res.body).toContain('X-API-Key: &lt;API_KEY&gt;');
    expect(res.body).not.toContain(key);
    expect(gateway.calls.at(-1)!.request).toEqual({
      path: '/api/v1/extract',
      body: { url: 'https://youtu.be/dQw4w9WgXcQ', format: 'srt', language: 'en' },
    });
    await b.get('/playground');
    await b.post('/playground', { operation: 'validate', url: 'https://youtu.be/dQw4w9WgXcQ' });
    expect(gateway.calls.at(-1)!.request).toEqual({
      path: '/api/v1/validate',
      query: { url: 'https://youtu.be/dQw4w9WgXcQ' },
      client_ip: '198.51.100.7',
    });
  });

  it('lets operators (configured or promoted) change tier and credits and revoke keys; others get 403', async () => {
    const { app, mail, gateway } = await buildTestDashboard({ OPERATOR_EMAILS: 'boss@example.com' });
    const user = new Browserish(app);
    await user.signUpVerified(mail, 'user@example.com', PASSWORD);
    await user.get('/keys');
    await user.post('/keys/generate', {});
    expect((await user.get('/operators')).statusCode).toBe(403);
    expect((await user.get('/keys')).body).not.toContain('href="/operators"');

    const boss = new Browserish(app);
    await boss.signUpVerified(mail, 'boss@example.com', PASSWORD);
    const list = await boss.get('/operators');
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain('user@example.com');
    const id = [...gateway.accounts.values()].find((a) => a.email === 'user@example.com')!.account_id;
    const saved = await boss.post(`/operators/accounts/${id}`, { tier: 'pro', add_credits: '25' });
    expect(saved.statusCode).toBe(200);
    expect(gateway.accounts.get(id)).toMatchObject({ tier: 'pro', credits: 75 });
    expect(
      (await boss.post(`/operators/accounts/${id}`, { tier: 'gold', add_credits: '1' })).statusCode,
    ).toBe(400);
    await boss.post(`/operators/accounts/${id}/revoke`, {});
    expect(gateway.accounts.get(id)!.key.status).toBe('revoked');
    expect((await user.post(`/operators/accounts/${id}/revoke`, {})).statusCode).toBe(403);

    // Promotion through the admin route with the admin token.
    const promote = (token: string, operator: unknown) =>
      app.inject({
        method: 'PUT',
        url: '/admin/operators/user@example.com',
        headers: { authorization: `Bearer ${token}` },
        payload: { operator },
      });
    expect((await promote('wrong-token-wrong-token-1234', true)).statusCode).toBe(401);
    expect((await promote(TEST_ADMIN_TOKEN, 'yes')).statusCode).toBe(400);
    expect((await promote(TEST_ADMIN_TOKEN, true)).json()).toEqual({
      email: 'user@example.com',
      operator: true,
    });
    expect((await user.get('/operators')).statusCode).toBe(200);
  });

  it('never logs passwords, keys, link tokens or session ids', async () => {
    const { app, mail, gateway, logs } = await buildTestDashboard();
    const b = new Browserish(app);
    await b.signUpVerified(mail, 'logs@example.com', PASSWORD);
    await b.get('/keys');
    await b.post('/keys/generate', {});
    await b.get('/forgot');
    await b.post('/forgot', { email: 'logs@example.com' });
    const token = new URL(mail.link('logs@example.com', 'reset')).searchParams.get('token')!;
    await b.get(`/reset?token=${token}`);
    await b.get('/sign-in');
    await b.post('/sign-in', { email: 'logs@example.com', password: `${PASSWORD}-wrong` });
    const text = logs.join('');
    expect(logs.length).toBeGreaterThan(10);
    for (const secret of [PASSWORD, [...gateway.keys.values()][0]!, token, b.cookie.split('=')[1]!]) {
      expect(text).not.toContain(secret);
    }
  });
});
