/**
 * The dashboard's low findings: `__Host-` Secure cookies behind TLS, older reset
 * links dead, anonymous visits write nothing to the store, bounded request times.
 */
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createInMemoryKeyValueStore } from '@subx/ports';
import type { KeyValueStore } from '@subx/ports';
import { Browserish, buildTestDashboard } from '../../test/support.ts';

const PASSWORD = 'hardening passphrase 42';
const WRITES = ['set', 'setIfAbsent', 'delete', 'increment', 'incrementWithin', 'publish'] as const;

/** The in-memory store, recording every write (our own port, not a third-party library). */
function recordingStore(): { kv: KeyValueStore; writes: string[] } {
  const inner = createInMemoryKeyValueStore();
  const writes: string[] = [];
  const kv = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if ((WRITES as readonly (string | symbol)[]).includes(prop))
          writes.push(`${String(prop)} ${String(args[0])}`);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { kv, writes };
}

const setCookies = (res: { headers: Record<string, unknown> }) =>
  [res.headers['set-cookie'] ?? []].flat().map(String);

describe('session cookie', () => {
  it('is __Host-subx_sid and Secure when the public URL is https, even if the pod sees plain HTTP', async () => {
    const { app, mail } = await buildTestDashboard({ DASHBOARD_PUBLIC_URL: 'https://dash.example.com' });
    const b = new Browserish(app);
    const form = await b.get('/sign-in');
    expect(setCookies(form).join('\n')).toMatch(/^__Host-subx_csrf=[^;]+;.*Path=\/;.*Secure/m);
    await b.signUpVerified(mail, 'tls@example.com', PASSWORD);
    expect(b.cookie).toMatch(/^__Host-subx_sid=/);
    await b.get('/sign-in');
    const signIn = await b.post('/sign-in', { email: 'tls@example.com', password: PASSWORD });
    const cookie = setCookies(signIn).find((c) => c.startsWith('__Host-subx_sid='))!;
    expect(cookie).toMatch(/; Path=\/(;|$)/);
    expect(cookie).toMatch(/Secure/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).not.toMatch(/Domain=/i);
    expect((await b.get('/keys')).statusCode).toBe(200);
    // The same id under the plain name is not read in Secure mode (no cookie tossing).
    const tossed = new Browserish(app);
    tossed.cookie = b.cookie.replace('__Host-subx_sid', 'subx_sid');
    expect((await tossed.get('/keys')).headers.location).toBe('/sign-in');
    await app.close();
  });

  it('is __Host- and Secure behind a trusted TLS proxy, plain subx_sid over plain HTTP on localhost', async () => {
    const { app, mail } = await buildTestDashboard({ TRUST_PROXY: '198.51.100.7', DASHBOARD_PUBLIC_URL: '' });
    const proxied = new Browserish(app);
    const res = await proxied.get('/sign-in', { 'x-forwarded-proto': 'https' });
    expect(setCookies(res).join('\n')).toMatch(/^__Host-subx_csrf=.*Secure/m);
    const local = new Browserish(app, '127.0.0.1');
    await local.signUpVerified(mail, 'local@example.com', PASSWORD);
    expect(local.cookie).toMatch(/^subx_sid=/);
    expect((await local.get('/keys')).statusCode).toBe(200);
    await app.close();
  });
});

describe('anonymous visits', () => {
  it('write nothing to the key-value store', async () => {
    const { kv, writes } = recordingStore();
    const { app } = await buildTestDashboard({}, { kv });
    const visitor = new Browserish(app);
    for (const path of ['/', '/sign-in', '/sign-up', '/forgot', '/no-such-page', '/reset?token=x', '/keys']) {
      await visitor.get(path);
    }
    await visitor.get('/sign-in');
    expect(
      (await visitor.post('/sign-in', { email: 'a@b.cd', password: 'x' }, { csrf: 'forged' })).statusCode,
    ).toBe(403);
    expect(writes).toEqual([]);
    // The stateless token still works for a real form.
    await visitor.get('/sign-in');
    expect(
      (await visitor.post('/sign-in', { email: 'a@b.cd', password: 'wrong password!' })).statusCode,
    ).toBe(401);
    await app.close();
  });
});

describe('reset links', () => {
  it('only the newest works, and none after a reset', async () => {
    const { app, mail, clock } = await buildTestDashboard();
    const b = new Browserish(app);
    await b.signUpVerified(mail, 'links@example.com', PASSWORD);
    const ask = async () => {
      await b.get('/forgot');
      await b.post('/forgot', { email: 'links@example.com' });
      const url = new URL(mail.link('links@example.com', 'reset'));
      return { path: `${url.pathname}${url.search}`, token: url.searchParams.get('token')! };
    };
    const older = await ask();
    clock.advance(61_000);
    const newer = await ask();
    expect(newer.token).not.toBe(older.token);
    expect((await b.get(older.path)).statusCode).toBe(400);
    await b.get(newer.path);
    expect(
      (await b.post('/reset', { token: newer.token, password: 'a new passphrase here' })).body,
    ).toContain('Password changed');
    for (const link of [older, newer]) {
      await b.get('/forgot');
      expect(
        (await b.post('/reset', { token: link.token, password: 'yet another passphrase' })).statusCode,
      ).toBe(400);
    }
    await app.close();
  });
});

describe('request timeouts', () => {
  it('close a socket that sends half a request and then stalls or trickles', async () => {
    const { app } = await buildTestDashboard({ DASHBOARD_REQUEST_TIMEOUT_MS: '800' });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const closedAfter = (trickle: boolean) =>
      new Promise<number>((resolve, reject) => {
        const started = Date.now();
        const socket = connect(port, '127.0.0.1', () => socket.write('GET /sign-in HTTP/1.1\r\nHost: x\r\n'));
        const timer = trickle ? setInterval(() => socket.write('X-A: b\r\n'), 200) : null;
        const bound = setTimeout(() => {
          socket.destroy();
          reject(new Error('the socket was still open after 10 s'));
        }, 10_000);
        socket.on('data', () => {});
        socket.on('error', () => {});
        socket.on('close', () => {
          if (timer) clearInterval(timer);
          clearTimeout(bound);
          resolve(Date.now() - started);
        });
      });
    expect(await closedAfter(false)).toBeLessThan(5_000);
    expect(await closedAfter(true)).toBeLessThan(5_000);
    await app.close();
  });
});
