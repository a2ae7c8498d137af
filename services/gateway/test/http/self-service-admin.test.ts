/**
 * The dashboard's admin routes (admin/self-service.routes.ts) on the admin listener's app, beside a
 * real public gateway app with the real access module: limits, and calls on behalf of an account
 * that run through the public routes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createDelegationRegistry } from '../../src/access/delegation.ts';
import { TEST_ADMIN_TOKEN, startReplicas } from '../access/support.ts';
import type { Replicas } from '../access/support.ts';
import { buildAdminApp } from '../../src/admin/listener.ts';
import { buildTestGateway, VIDEO_URL } from './support.ts';

const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
let replicas: Replicas | undefined;
let app: FastifyInstance | undefined;
let publicApp: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  await publicApp?.close();
  await replicas?.stop();
  app = publicApp = replicas = undefined;
});

async function setup() {
  replicas = await startReplicas(1);
  const m = replicas.modules[0]!;
  const gateway = await buildTestGateway({
    deps: {
      access: m.access,
      credits: m.credits,
      idempotency: m.idempotency,
      clock: replicas.clock,
    },
  });
  publicApp = gateway.app;
  app = await buildAdminApp({ config: gateway.config, access: m, publicApp });
  const created = await app.inject({
    method: 'POST',
    url: '/admin/v1/accounts',
    headers: auth,
    payload: { tier: 'free' },
  });
  expect(created.statusCode).toBe(201);
  const { account_id: id, api_key: apiKey } = created.json() as { account_id: string; api_key: string };
  return { app, publicApp, gateway, id, apiKey };
}

describe('GET /admin/v1/accounts/{id}/limits', () => {
  it('reports today against the daily limit, the reset time, balance and allowance', async () => {
    const { app, publicApp, id, apiKey } = await setup();
    const extract = await publicApp.inject({
      method: 'POST',
      url: '/api/v1/extract',
      headers: { 'x-api-key': apiKey },
      payload: { url: VIDEO_URL },
    });
    expect(extract.statusCode).toBe(200);
    const res = await app.inject({ method: 'GET', url: `/admin/v1/accounts/${id}/limits`, headers: auth });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      account_id: id,
      tier: 'free',
      daily: { limit: 100, used: 1, remaining: 99, reset_at: '2026-03-16T00:00:00.000Z' },
      credits: { balance: 50, monthly_allowance: 50 },
      // What a free key may call: summarize, comments and jobs answer 403 TIER_REQUIRED.
      operations: {
        extract: { minimum_tier: 'free', allowed: true },
        batch: { minimum_tier: 'free', allowed: true },
        playlist: { minimum_tier: 'free', allowed: true },
        summarize: { minimum_tier: 'pro', allowed: false },
        comments: { minimum_tier: 'pro', allowed: false },
        comments_analyze: { minimum_tier: 'pro', allowed: false },
        jobs: { minimum_tier: 'pro', allowed: false },
        search: { minimum_tier: 'free', allowed: true },
        watches: { minimum_tier: 'pro', allowed: false },
        transcription: { minimum_tier: 'pro', allowed: false },
        translation_by_model: { minimum_tier: 'free', allowed: true },
        embeddings: { minimum_tier: 'free', allowed: true },
      },
    });
    const unknown = await app.inject({
      method: 'GET',
      url: '/admin/v1/accounts/acct_00000000000000000000000000000000/limits',
      headers: auth,
    });
    expect(unknown.statusCode).toBe(404);
    const anonymous = await app.inject({ method: 'GET', url: `/admin/v1/accounts/${id}/limits` });
    expect(anonymous.statusCode).toBe(401);
  });
});

describe('POST /admin/v1/accounts/{id}/calls', () => {
  it('runs extract as the account (counted, rate-limit headers) without its key', async () => {
    const { app, id } = await setup();
    const res = await app.inject({
      method: 'POST',
      url: `/admin/v1/accounts/${id}/calls`,
      headers: auth,
      payload: { path: '/api/v1/extract', body: { url: VIDEO_URL } },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const call = res.json() as {
      status: number;
      headers: Record<string, string>;
      body: { video_id: string };
    };
    expect(call.status).toBe(200);
    expect(JSON.stringify(call.body)).toContain('dQw4w9WgXcQ');
    expect(call.headers['x-ratelimit-remaining']).toBe('99');
    expect(call.headers['x-ratelimit-limit']).toBe('100');
    const limits = await app.inject({ method: 'GET', url: `/admin/v1/accounts/${id}/limits`, headers: auth });
    expect((limits.json() as { daily: { used: number } }).daily.used).toBe(1);

    // The route's own validation answers as it would for the key.
    const bad = await app.inject({
      method: 'POST',
      url: `/admin/v1/accounts/${id}/calls`,
      headers: auth,
      payload: { path: '/api/v1/extract', body: { url: 'https://example.com/x' } },
    });
    expect(bad.json()).toMatchObject({ status: 400, body: { error: { code: 'INVALID_URL' } } });
  });

  it('answers the 401 of a missing key once the account key is revoked', async () => {
    const { app, id } = await setup();
    expect(
      (await app.inject({ method: 'DELETE', url: `/admin/v1/accounts/${id}/api-key`, headers: auth }))
        .statusCode,
    ).toBe(204);
    const res = await app.inject({
      method: 'POST',
      url: `/admin/v1/accounts/${id}/calls`,
      headers: auth,
      payload: { path: '/api/v1/extract', body: { url: VIDEO_URL } },
    });
    expect(res.json()).toMatchObject({ status: 401, body: { error: { code: 'UNAUTHORIZED' } } });
  });

  it('runs validate with the person’s IP and refuses other paths and shapes', async () => {
    const { app, gateway, id } = await setup();
    gateway.backends.handlers.validateVideo = async () => ({
      valid: true,
      hasSubtitles: true,
      manualLanguages: ['en'],
      autoGeneratedLanguages: [],
      videoTitle: 'T',
      duration: 10,
      invalidReason: '',
      captionsPending: '',
      cached: false,
    });
    const res = await app.inject({
      method: 'POST',
      url: `/admin/v1/accounts/${id}/calls`,
      headers: auth,
      payload: { path: '/api/v1/validate', query: { url: VIDEO_URL }, client_ip: '203.0.113.9' },
    });
    expect(res.json()).toMatchObject({ status: 200, body: { valid: true } });
    expect(gateway.ipLimiter.counts.get('203.0.113.9')).toBe(1);
    for (const payload of [
      { path: '/admin/v1/accounts' },
      { path: '/api/v1/summarize', body: {} },
      { path: '/api/v1/validate', query: { url: 1 } },
      { path: '/api/v1/validate', client_ip: 'not-an-ip' },
      { path: '/api/v1/extract', api_key: 'x' },
      [],
    ]) {
      const bad = await app.inject({
        method: 'POST',
        url: `/admin/v1/accounts/${id}/calls`,
        headers: auth,
        payload: payload as object,
      });
      expect(bad.statusCode, JSON.stringify(payload)).toBe(400);
    }
  });
});

describe('delegation tokens', () => {
  it('authenticate once, expire, and are bounded', () => {
    let now = 0;
    const registry = createDelegationRegistry({ clock: { now: () => now }, ttlMs: 1_000 });
    const token = registry.issue({ id: 'acct_1', tier: 'pro' });
    expect(token).toMatch(/^sxd_[A-Za-z0-9_-]{43}$/);
    expect(registry.redeem(token)).toEqual({ id: 'acct_1', tier: 'pro' });
    expect(registry.redeem(token)).toBeNull();
    const late = registry.issue({ id: 'acct_1', tier: 'pro' });
    now = 1_000;
    expect(registry.redeem(late)).toBeNull();
    expect(registry.redeem('sxk_v1_whatever')).toBeNull();
    expect(registry.redeem(undefined)).toBeNull();
    for (let i = 0; i < 1_000; i++) registry.issue({ id: 'acct_1', tier: 'pro' });
    expect(() => registry.issue({ id: 'acct_1', tier: 'pro' })).toThrow(/too many/);
    now = 5_000;
    expect(registry.issue({ id: 'acct_1', tier: 'pro' })).toMatch(/^sxd_/);
  });
});
