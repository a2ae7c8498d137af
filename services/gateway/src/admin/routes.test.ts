import { afterEach, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { buildAdminApp } from './listener.ts';
import { loadConfig } from '../config.ts';
import type { Replicas } from '../../test/access/support.ts';
import { TEST_ADMIN_TOKEN, startReplicas } from '../../test/access/support.ts';

let replicas: Replicas | undefined;
let app: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  await replicas?.stop();
  app = undefined;
  replicas = undefined;
});

async function setup(count = 1) {
  replicas = await startReplicas(count);
  // The admin listener's app, as startGateway builds it (the public app only serves /calls).
  app = await buildAdminApp({
    config: loadConfig({}),
    access: replicas.modules[0]!,
    publicApp: Fastify(),
  });
  return { replicas, app };
}

const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

async function createAccount(a: FastifyInstance, body: Record<string, unknown> = { tier: 'pro' }) {
  const res = await a.inject({ method: 'POST', url: '/admin/v1/accounts', headers: auth, payload: body });
  expect(res.statusCode).toBe(201);
  return res.json() as {
    account_id: string;
    tier: string;
    credits: number;
    api_key: string;
    created_at: string;
  };
}

describe('admin API errors before a route runs', () => {
  it('answers an over-long path parameter in the documented shape with X-Request-Id, like the public port', async () => {
    const { app } = await setup();
    const res = await app.inject({
      method: 'GET',
      url: `/admin/v1/accounts/${'a'.repeat(5_000)}`,
      headers: auth,
    });
    expect(res.statusCode).toBe(414);
    expect(res.headers['x-request-id']).toMatch(/\S/);
    const body = res.json() as { error: { code: string; message: string; request_id: string } };
    expect(body.error.request_id).toBe(res.headers['x-request-id']);
    expect(body.error.code).toBe('URI_TOO_LONG');
    // Nothing of the path comes back (it is the caller's input, possibly 5 KB of it).
    expect(res.body.length).toBeLessThan(500);
  });
});

describe('admin API authentication', () => {
  it('answers 401 in the documented shape without the right bearer token', async () => {
    const { app } = await setup();
    const attempts: Record<string, string>[] = [
      {},
      { authorization: TEST_ADMIN_TOKEN },
      { authorization: `Basic ${TEST_ADMIN_TOKEN}` },
      { authorization: `Bearer ${TEST_ADMIN_TOKEN}x` },
      { authorization: `Bearer ${TEST_ADMIN_TOKEN.slice(0, -1)}` },
      { authorization: 'Bearer ' },
      { authorization: `Bearer ${'x'.repeat(10_000)}` },
    ];
    let caller = 0;
    for (const headers of attempts) {
      for (const [method, url] of [
        ['POST', '/admin/v1/accounts'],
        ['GET', '/admin/v1/accounts/acct_00000000000000000000000000000000'],
        ['DELETE', '/admin/v1/accounts/acct_00000000000000000000000000000000/api-key'],
      ] as const) {
        const res = await app.inject({
          method,
          url,
          headers,
          payload: method === 'POST' ? { tier: 'pro' } : undefined,
          // One caller each: the failure limit (tested below) is per address.
          remoteAddress: `192.0.2.${++caller}`,
        });
        expect(res.statusCode).toBe(401);
        const body = res.json();
        expect(body.error).toMatchObject({
          code: 'UNAUTHORIZED',
          docs_url: '/docs/errors#unauthorized',
          retryable: false,
        });
        expect(typeof body.error.request_id).toBe('string');
        expect(res.body).not.toContain(TEST_ADMIN_TOKEN);
      }
    }
  });
});

describe('accounts', () => {
  it('creates an account and shows it without the key', async () => {
    const { app } = await setup();
    const created = await createAccount(app, { tier: 'pro', email: 'ops@example.com' });
    expect(created).toMatchObject({ tier: 'pro', credits: 5_000 });
    expect(created.account_id).toMatch(/^acct_/);
    expect(created.api_key).toMatch(/^sxk_v1_[A-Za-z0-9]{32}$/);
    expect(Number.isNaN(Date.parse(created.created_at))).toBe(false);
    expect(Object.keys(created).sort()).toEqual(['account_id', 'api_key', 'created_at', 'credits', 'tier']);

    const res = await app.inject({
      method: 'GET',
      url: `/admin/v1/accounts/${created.account_id}`,
      headers: auth,
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain(created.api_key);
    expect(res.json()).toMatchObject({
      account_id: created.account_id,
      tier: 'pro',
      credits: 5_000,
      key: {
        prefix: 'sxk_v1_',
        last4: created.api_key.slice(-4),
        created_at: created.created_at,
        status: 'active',
      },
      usage: { today_requests: 0, month_credits: 0 },
    });
  });

  it('takes explicit credits and every tier', async () => {
    const { app } = await setup();
    for (const tier of ['free', 'pro', 'business', 'enterprise']) {
      expect(await createAccount(app, { tier, credits: 7 })).toMatchObject({ tier, credits: 7 });
    }
    expect((await createAccount(app, { tier: 'free', credits: 0 })).credits).toBe(0);
  });

  it('validates create bodies strictly', async () => {
    const { app } = await setup();
    const bad: unknown[] = [
      {},
      { tier: 'gold' },
      { tier: 'PRO' },
      { tier: 'pro', credits: -1 },
      { tier: 'pro', credits: 1.5 },
      { tier: 'pro', credits: '10' },
      { tier: 'pro', credits: 1e300 },
      { tier: 'pro', admin: true },
      { tier: 'pro', email: 'not-an-email' },
      [{ tier: 'pro' }],
      null,
      'pro',
      42,
    ];
    for (const payload of bad) {
      const res = await app.inject({
        method: 'POST',
        url: '/admin/v1/accounts',
        headers: { ...auth, 'content-type': 'application/json' },
        payload: JSON.stringify(payload),
      });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().error).toMatchObject({
        code: 'INVALID_REQUEST',
        docs_url: '/docs/errors#invalid-request',
      });
    }
    const malformed = await app.inject({
      method: 'POST',
      url: '/admin/v1/accounts',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: '{"tier": "pro",',
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().error.code).toBe('INVALID_REQUEST');
    const text = await app.inject({
      method: 'POST',
      url: '/admin/v1/accounts',
      headers: { ...auth, 'content-type': 'text/plain' },
      payload: 'tier=pro',
    });
    expect(text.statusCode).toBe(415);
    expect(text.json().error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const empty = await app.inject({ method: 'POST', url: '/admin/v1/accounts', headers: auth });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().error.code).toBe('INVALID_REQUEST');
  });

  it('accepts the Bearer scheme in any case', async () => {
    const { app } = await setup();
    for (const scheme of ['bearer', 'BEARER', 'bEaReR']) {
      const res = await app.inject({
        method: 'POST',
        url: '/admin/v1/accounts',
        headers: { authorization: `${scheme} ${TEST_ADMIN_TOKEN}` },
        payload: { tier: 'free' },
      });
      expect(res.statusCode, scheme).toBe(201);
    }
  });

  it('accepts a bodyless POST with a JSON content type where the body is optional', async () => {
    const { app } = await setup();
    const account = await createAccount(app);
    for (const payload of [undefined, '', '  ']) {
      const res = await app.inject({
        method: 'POST',
        url: `/admin/v1/accounts/${account.account_id}/api-key`,
        headers: { ...auth, 'content-type': 'application/json' },
        ...(payload === undefined ? {} : { payload }),
      });
      expect(res.statusCode, JSON.stringify(payload)).toBe(201);
      expect(res.json().api_key).toMatch(/^sxk_v1_/);
    }
    // A route that needs a body still says so.
    const create = await app.inject({
      method: 'POST',
      url: '/admin/v1/accounts',
      headers: { ...auth, 'content-type': 'application/json' },
    });
    expect(create.statusCode).toBe(400);
    expect(create.json().error.code).toBe('INVALID_REQUEST');
  });

  it('answers 404 NOT_FOUND for unknown or malformed account ids', async () => {
    const { app } = await setup();
    for (const id of ['acct_00000000000000000000000000000000', 'nope', '..%2F..%2Fetc']) {
      for (const [method, url] of [
        ['GET', `/admin/v1/accounts/${id}`],
        ['PATCH', `/admin/v1/accounts/${id}`],
        ['POST', `/admin/v1/accounts/${id}/api-key`],
        ['DELETE', `/admin/v1/accounts/${id}/api-key`],
        ['GET', `/admin/v1/accounts/${id}/usage?from=2026-03-01&to=2026-03-02`],
      ] as const) {
        const res = await app.inject({
          method,
          url,
          headers: auth,
          payload: method === 'PATCH' ? {} : undefined,
        });
        expect(res.statusCode, `${method} ${url}`).toBe(404);
        expect(res.json().error).toMatchObject({ code: 'NOT_FOUND', docs_url: '/docs/errors#not-found' });
      }
    }
  });

  it('patches tier and credits: credits sets the balance, add_credits adds to it', async () => {
    const { app, replicas } = await setup();
    const created = await createAccount(app, { tier: 'free', credits: 10 });
    const url = `/admin/v1/accounts/${created.account_id}`;
    let res = await app.inject({ method: 'PATCH', url, headers: auth, payload: { credits: 100 } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ account_id: created.account_id, tier: 'free', credits: 100 });
    res = await app.inject({ method: 'PATCH', url, headers: auth, payload: { add_credits: 25 } });
    expect(res.json().credits).toBe(125);
    res = await app.inject({ method: 'PATCH', url, headers: auth, payload: { tier: 'business' } });
    expect(res.json()).toMatchObject({ tier: 'business', credits: 125, key: { status: 'active' } });
    // The new tier counts at once.
    const admitted = await replicas.modules[0]!.access.admit({
      apiKey: created.api_key,
      operation: 'summarize',
    });
    expect(admitted.rateLimit.limit).toBe(50_000);
    for (const payload of [
      { credits: 1, add_credits: 1 },
      { tier: 'platinum' },
      { credits: -5 },
      { add_credits: 0.5 },
      { balance: 3 },
    ]) {
      const bad = await app.inject({ method: 'PATCH', url, headers: auth, payload });
      expect(bad.statusCode, JSON.stringify(payload)).toBe(400);
      expect(bad.json().error.code).toBe('INVALID_REQUEST');
    }
    expect((await app.inject({ method: 'GET', url, headers: auth })).json().credits).toBe(125);
  });
});

describe('keys', () => {
  it('regenerates (201, old key dead at once on another replica) and revokes (204)', async () => {
    const { app, replicas } = await setup(2);
    const other = replicas.modules[1]!;
    const created = await createAccount(app, { tier: 'pro' });
    await other.access.admit({ apiKey: created.api_key, operation: 'extract' });

    const regen = await app.inject({
      method: 'POST',
      url: `/admin/v1/accounts/${created.account_id}/api-key`,
      headers: auth,
    });
    expect(regen.statusCode).toBe(201);
    const { api_key: newKey } = regen.json() as { api_key: string };
    expect(newKey).toMatch(/^sxk_v1_[A-Za-z0-9]{32}$/);
    expect(newKey).not.toBe(created.api_key);
    await expect(other.access.admit({ apiKey: created.api_key, operation: 'extract' })).rejects.toMatchObject(
      {
        code: 'UNAUTHORIZED',
      },
    );
    await other.access.admit({ apiKey: newKey, operation: 'extract' });

    const del = await app.inject({
      method: 'DELETE',
      url: `/admin/v1/accounts/${created.account_id}/api-key`,
      headers: auth,
    });
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    await expect(other.access.admit({ apiKey: newKey, operation: 'extract' })).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });
    const shown = await app.inject({
      method: 'GET',
      url: `/admin/v1/accounts/${created.account_id}`,
      headers: auth,
    });
    expect(shown.json().key).toMatchObject({ prefix: 'sxk_v1_', last4: newKey.slice(-4), status: 'revoked' });
    expect(shown.json().usage.today_requests).toBe(2);

    // Generating after a revoke issues a working key again.
    const again = await app.inject({
      method: 'POST',
      url: `/admin/v1/accounts/${created.account_id}/api-key`,
      headers: auth,
    });
    expect(again.statusCode).toBe(201);
    await other.access.admit({ apiKey: (again.json() as { api_key: string }).api_key, operation: 'extract' });
  });
});

describe('usage', () => {
  it('reports per-day requests and credits by operation', async () => {
    const { app, replicas } = await setup();
    const m = replicas.modules[0]!;
    const created = await createAccount(app, { tier: 'pro', credits: 100 });
    const apiKey = created.api_key;
    await m.access.admit({ apiKey, operation: 'extract' });
    await m.access.admit({ apiKey, operation: 'summarize' });
    const r = await m.credits.reserve({
      accountId: created.account_id,
      operation: 'summarize',
      amount: 6,
      requestId: 'a',
    });
    await r.commit(4);
    replicas.clock.advance(86_400_000);
    await m.access.admit({ apiKey, operation: 'batch' });
    const b = await m.credits.reserve({
      accountId: created.account_id,
      operation: 'batch',
      amount: 3,
      requestId: 'b',
    });
    await b.commit(2, { successfulItems: 2, attemptedItems: 3 });

    const res = await app.inject({
      method: 'GET',
      url: `/admin/v1/accounts/${created.account_id}/usage?from=2026-03-14&to=2026-03-16`,
      headers: auth,
    });
    expect(res.statusCode).toBe(200);
    const usage = res.json();
    expect(usage).toMatchObject({ account_id: created.account_id, from: '2026-03-14', to: '2026-03-16' });
    expect(usage.days.map((d: { date: string }) => d.date)).toEqual([
      '2026-03-14',
      '2026-03-15',
      '2026-03-16',
    ]);
    expect(usage.days[0]).toMatchObject({ requests: 0, credits: 0 });
    expect(usage.days[1]).toMatchObject({
      requests: 2,
      credits: 4,
      operations: { extract: { requests: 1, credits: 0 }, summarize: { requests: 1, credits: 4 } },
    });
    expect(usage.days[2]).toMatchObject({
      requests: 1,
      credits: 2,
      operations: { batch: { requests: 1, credits: 2 } },
    });
    expect(usage).toMatchObject({ total_requests: 3, total_credits: 6 });

    const account = await app.inject({
      method: 'GET',
      url: `/admin/v1/accounts/${created.account_id}`,
      headers: auth,
    });
    expect(account.json()).toMatchObject({ credits: 94, usage: { today_requests: 1, month_credits: 6 } });

    for (const query of [
      'from=2026-03-16&to=2026-03-14',
      'from=2026-02-30&to=2026-03-01',
      'from=yesterday&to=2026-03-01',
      'from=2024-01-01&to=2026-03-01',
      'from=2026-03-01&to=2026-03-02&extra=1',
    ]) {
      const bad = await app.inject({
        method: 'GET',
        url: `/admin/v1/accounts/${created.account_id}/usage?${query}`,
        headers: auth,
      });
      expect(bad.statusCode, query).toBe(400);
      expect(bad.json().error.code).toBe('INVALID_REQUEST');
    }
  });
});
