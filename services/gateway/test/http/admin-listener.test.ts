/**
 * The admin API on its own listener (admin/listener.ts), over real sockets: not on the public app
 * (404 there), failed token attempts limited per caller (a concurrent burst included), and tokens
 * shorter than 32 characters refused at startup; its /openapi.json is outside that count.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ConfigError } from '@subx/service-kit';
import { loadAccessConfig } from '../../src/access/config.ts';
import { TEST_ADMIN_TOKEN, startReplicas } from '../access/support.ts';
import type { Replicas } from '../access/support.ts';
import { buildAdminApp, listenAdmin } from '../../src/admin/listener.ts';
import { loadConfig } from '../../src/config.ts';
import { buildTestGateway } from './support.ts';

let replicas: Replicas | undefined;
const apps: FastifyInstance[] = [];

afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
  await replicas?.stop();
  replicas = undefined;
});

async function startAdmin() {
  replicas = await startReplicas(1);
  const m = replicas.modules[0]!;
  const gateway = await buildTestGateway({
    deps: { access: m.access, credits: m.credits, idempotency: m.idempotency, clock: replicas.clock },
  });
  apps.push(gateway.app);
  const admin = await buildAdminApp({
    config: gateway.config,
    access: m,
    publicApp: gateway.app,
    failures: { clock: replicas.clock },
  });
  apps.push(admin);
  const { url } = await listenAdmin(admin, { ADMIN_PORT: 0, ADMIN_HOST: '127.0.0.1' });
  return { gateway, admin, url, clock: replicas.clock };
}

const create = (url: string, token: string) =>
  fetch(`${url}/admin/v1/accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tier: 'free' }),
    signal: AbortSignal.timeout(10_000),
  });

describe('admin listener', () => {
  it('serves /admin/v1 on its own port; the public app answers 404 for it', async () => {
    const { gateway, url } = await startAdmin();
    const created = await create(url, TEST_ADMIN_TOKEN);
    expect(created.status).toBe(201);
    const { account_id: id } = (await created.json()) as { account_id: string };

    const onPublic = await gateway.app.inject({
      method: 'GET',
      url: `/admin/v1/accounts/${id}`,
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    expect(onPublic.statusCode).toBe(404);
    expect(onPublic.json()).toMatchObject({ error: { code: 'NOT_FOUND' } });
    // The public API is not on the admin port either.
    expect((await fetch(`${url}/health`, { signal: AbortSignal.timeout(5_000) })).status).toBe(404);
  });

  it('limits failed token attempts per caller: a concurrent burst gets at most 5 compares', async () => {
    const { url, clock } = await startAdmin();
    const burst = await Promise.all(Array.from({ length: 20 }, () => create(url, 'x'.repeat(40))));
    const statuses = burst.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
    const limited = burst.find((r) => r.status === 429)!;
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(await limited.json()).toMatchObject({ error: { code: 'RATE_LIMITED', retryable: true } });

    // Blocked before the compare: even the right token waits out the window from this address.
    expect((await create(url, TEST_ADMIN_TOKEN)).status).toBe(429);
    clock.advance(60_000);
    expect((await create(url, TEST_ADMIN_TOKEN)).status).toBe(201);
    // Authorized calls do not use up the allowance.
    for (let i = 0; i < 10; i += 1) expect((await create(url, TEST_ADMIN_TOKEN)).status).toBe(201);
    for (let i = 0; i < 5; i += 1) expect((await create(url, 'wrong')).status).toBe(401);
    expect((await create(url, 'wrong')).status).toBe(429);
  });

  it('serves /openapi.json without the token, outside the failed-token count', async () => {
    const { url } = await startAdmin();
    const openapi = () => fetch(`${url}/openapi.json`, { signal: AbortSignal.timeout(10_000) });
    for (let i = 0; i < 4; i += 1) expect((await create(url, 'wrong')).status).toBe(401);
    // A 200 here gives no attempt back: the fifth wrong token is still the last one compared.
    expect((await openapi()).status).toBe(200);
    expect((await create(url, 'wrong')).status).toBe(401);
    expect((await create(url, 'wrong')).status).toBe(429);
    // Nor is the document blocked with the caller.
    const doc = await openapi();
    expect(doc.status).toBe(200);
    expect(((await doc.json()) as { openapi: string }).openapi).toBe('3.1.0');
  });

  it('binds to loopback by default', () => {
    expect(loadConfig({}).ADMIN_HOST).toBe('127.0.0.1');
  });

  it('refuses an ADMIN_TOKEN shorter than 32 characters; a generated one is long enough', () => {
    const env = { API_KEY_PEPPER: 'p'.repeat(32) };
    let error: unknown;
    try {
      loadAccessConfig({ ...env, ADMIN_TOKEN: 'x'.repeat(31) });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(String((error as Error).message)).toMatch(/ADMIN_TOKEN[\s\S]*at least 32 characters/);
    expect(String((error as Error).message)).not.toContain('x'.repeat(31));
    expect(loadAccessConfig({ ...env, ADMIN_TOKEN: 'x'.repeat(32) }).config.adminToken).toHaveLength(32);
    const generated = loadAccessConfig({}, { embedded: true });
    expect(generated.generated.adminToken).toBe(true);
    expect(generated.config.adminToken.length).toBeGreaterThanOrEqual(32);
  });
});
