/**
 * The sign-in throttle holds under concurrency (the attempt is counted before
 * scrypt runs), the per-address lock stays short, and IPv6 clients are limited per /64.
 */
import { describe, expect, it, vi } from 'vitest';
import { Browserish, buildTestDashboard } from '../../test/support.ts';

const PASSWORD = 'the owner knows this one';
const EMAIL_MAX_DELAY_MS = 60_000;

async function burst(client: Browserish, email: string, n: number, password = 'wrong password!!') {
  await client.get('/sign-in');
  const csrf = client.csrf();
  return Promise.all(Array.from({ length: n }, () => client.post('/sign-in', { email, password }, { csrf })));
}

// Dozens of sign-in attempts per test, each through scrypt (at the tests' low cost): on a loaded
// machine they may still take longer than vitest's 5 s default, which would fail a test whose
// assertions hold.
vi.setConfig({ testTimeout: 30_000 });

describe('sign-in throttle under concurrency', () => {
  it('answers at most 5 of 40 concurrent wrong passwords for one address with 401, the rest 429 + Retry-After', async () => {
    const { app, mail } = await buildTestDashboard();
    await new Browserish(app, '192.0.2.1').signUpVerified(mail, 'target@example.com', PASSWORD);
    const answers = await burst(new Browserish(app, '203.0.113.40'), 'target@example.com', 40);
    const checked = answers.filter((r) => r.statusCode === 401);
    const refused = answers.filter((r) => r.statusCode === 429);
    expect(checked.length).toBeLessThanOrEqual(5);
    expect(checked.length + refused.length).toBe(40);
    for (const r of refused) expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    await app.close();
  });

  it('holds for one address attacked from 40 networks at once', async () => {
    const { app, mail } = await buildTestDashboard();
    await new Browserish(app, '192.0.2.1').signUpVerified(mail, 'spread@example.com', PASSWORD);
    const clients = Array.from({ length: 40 }, (_, i) => new Browserish(app, `198.18.${i}.1`));
    for (const c of clients) await c.get('/sign-in');
    const answers = await Promise.all(
      clients.map((c) => c.post('/sign-in', { email: 'spread@example.com', password: 'wrong password!!' })),
    );
    expect(answers.filter((r) => r.statusCode === 401).length).toBeLessThanOrEqual(5);
    await app.close();
  });

  it('holds for one network trying 60 addresses at once (20 free, then one at a time)', async () => {
    const { app } = await buildTestDashboard();
    const attacker = new Browserish(app, '203.0.113.60');
    await attacker.get('/sign-in');
    const csrf = attacker.csrf();
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        attacker.post('/sign-in', { email: `n${i}@example.com`, password: 'whatever123' }, { csrf }),
      ),
    );
    expect(answers.filter((r) => r.statusCode === 401).length).toBeLessThanOrEqual(21);
    expect(answers.filter((r) => r.statusCode === 429).length).toBeGreaterThanOrEqual(39);
    await app.close();
  });
});

describe('per-address lock', () => {
  it('never keeps the owner out longer than a minute, however many failures others made', async () => {
    const { app, mail, clock } = await buildTestDashboard();
    await new Browserish(app, '192.0.2.1').signUpVerified(mail, 'owner@example.com', PASSWORD);
    // 15 failures from 15 networks, each waiting out the lock: the old doubling would reach 2048 s.
    for (let i = 0; i < 15; i++) {
      const attacker = new Browserish(app, `198.19.${i}.1`);
      await attacker.get('/sign-in');
      const answer = await attacker.post('/sign-in', {
        email: 'owner@example.com',
        password: 'nope nope nope',
      });
      expect(answer.statusCode).toBe(401);
      if (i < 14) clock.advance(EMAIL_MAX_DELAY_MS);
    }
    const owner = new Browserish(app, '192.0.2.1');
    await owner.get('/sign-in');
    const locked = await owner.post('/sign-in', { email: 'owner@example.com', password: PASSWORD });
    expect(locked.statusCode).toBe(429);
    expect(Number(locked.headers['retry-after'])).toBeLessThanOrEqual(60);
    clock.advance(EMAIL_MAX_DELAY_MS);
    await owner.get('/sign-in');
    expect(
      (await owner.post('/sign-in', { email: 'owner@example.com', password: PASSWORD })).statusCode,
    ).toBe(303);
    await app.close();
  });
});

describe('IPv6 clients', () => {
  it('share the sign-in limit of their /64', async () => {
    const { app } = await buildTestDashboard();
    const statuses: number[] = [];
    for (let i = 1; i <= 22; i++) {
      const client = new Browserish(app, `2001:db8:7:7::${i.toString(16)}`);
      await client.get('/sign-in');
      statuses.push(
        (await client.post('/sign-in', { email: `v6-${i}@example.com`, password: 'whatever123' })).statusCode,
      );
    }
    expect(statuses.slice(0, 21).every((s) => s === 401)).toBe(true);
    expect(statuses[21]).toBe(429);
    const neighbour = new Browserish(app, '2001:db8:7:8::1');
    await neighbour.get('/sign-in');
    expect(
      (await neighbour.post('/sign-in', { email: 'v6-x@example.com', password: 'whatever123' })).statusCode,
    ).toBe(401);
    await app.close();
  });
});
