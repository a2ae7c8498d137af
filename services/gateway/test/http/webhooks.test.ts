/**
 * The webhook secret routes: the public GET/POST /api/v1/webhooks/secret (account-only: a valid
 * key, nothing counted) and the dashboard's GET/POST /admin/v1/accounts/{id}/webhook-secret, with
 * the real webhook module on the in-memory document store.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createInMemoryDocumentStore, ManualClock } from '@subx/ports';
import { loadJobServiceConfig } from '../../../jobs/src/config.ts';
import { TEST_ADMIN_TOKEN, startReplicas } from '../access/support.ts';
import type { Replicas } from '../access/support.ts';
import { silentLogger } from '@subx/ports';
import { buildAdminApp } from '../../src/admin/listener.ts';
import { createWebhookModule, PREVIOUS_SECRET_GRACE_MS } from '../../../jobs/src/webhooks/index.ts';
import type { WebhookModule } from '../../../jobs/src/webhooks/index.ts';
import { buildTestGateway, KEYS, START } from './support.ts';
import type { TestGateway } from './support.ts';
import { webhookSecretsApiOf } from '../../../jobs/src/api.ts';

/** The secret view of an answer, without the request's own id. */
function secretOf(response: { json(): Record<string, unknown> }): Record<string, unknown> {
  const { request_id: _requestId, ...view } = response.json();
  return view;
}

const PEPPER = 'a-test-pepper-of-at-least-32-characters!!';
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const apps: FastifyInstance[] = [];
let replicas: Replicas | undefined;

afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
  await replicas?.stop();
  replicas = undefined;
});

async function gatewayWithWebhooks(): Promise<TestGateway & { webhooks: WebhookModule; clock: ManualClock }> {
  // The module has its own manual clock, so the 24 hours can be walked through.
  const clock = new ManualClock(START);
  const webhooks = createWebhookModule({
    store: createInMemoryDocumentStore(),
    clock,
    logger: silentLogger,
    config: loadJobServiceConfig({}, { embedded: true }),
    pepper: PEPPER,
  });
  const gw = await buildTestGateway({ deps: { webhookSecrets: webhookSecretsApiOf(webhooks.secrets) } });
  apps.push(gw.app);
  return { ...gw, webhooks, clock };
}

describe('/api/v1/webhooks/secret', () => {
  it('401 without a valid key', async () => {
    const gw = await gatewayWithWebhooks();
    for (const method of ['GET', 'POST'] as const) {
      const none = await gw.app.inject({ method, url: '/api/v1/webhooks/secret' });
      expect(none.statusCode, method).toBe(401);
      expect(none.json().error.code).toBe('UNAUTHORIZED');
      const wrong = await gw.app.inject({
        method,
        url: '/api/v1/webhooks/secret',
        headers: { 'x-api-key': 'sxk_v1_WRONGaaaaaaaaaaaaaaaaaaaaaaaaaaa' },
      });
      expect(wrong.statusCode, method).toBe(401);
    }
  });

  it('GET creates the secret on first need; POST rotates (201) and the old one signs 24 h more', async () => {
    const gw = await gatewayWithWebhooks();
    const headers = { 'x-api-key': KEYS.free };
    const first = await gw.app.inject({ method: 'GET', url: '/api/v1/webhooks/secret', headers });
    expect(first.statusCode).toBe(200);
    expect(first.headers['cache-control']).toBe('no-store');
    // Account-only: not counted, so no rate-limit headers.
    expect(first.headers['x-ratelimit-limit']).toBeUndefined();
    expect(first.json()).toEqual({
      secret: expect.stringMatching(SECRET),
      created_at: new Date(gw.clock.now()).toISOString(),
      previous_secret_expires_at: null,
      request_id: first.headers['x-request-id'],
    });
    const again = await gw.app.inject({ method: 'GET', url: '/api/v1/webhooks/secret', headers });
    expect(secretOf(again)).toEqual(secretOf(first));

    gw.clock.advance(1_000);
    const rotated = await gw.app.inject({ method: 'POST', url: '/api/v1/webhooks/secret', headers });
    expect(rotated.statusCode).toBe(201);
    expect(rotated.headers['cache-control']).toBe('no-store');
    const body = rotated.json();
    expect(body).toEqual({
      secret: expect.stringMatching(SECRET),
      created_at: new Date(gw.clock.now()).toISOString(),
      previous_secret_expires_at: new Date(gw.clock.now() + PREVIOUS_SECRET_GRACE_MS).toISOString(),
      request_id: rotated.headers['x-request-id'],
    });
    expect(body.secret).not.toBe(first.json().secret);
    expect(await gw.webhooks.secrets.signingSecrets('acc_free')).toEqual([body.secret, first.json().secret]);
    const current = await gw.app.inject({ method: 'GET', url: '/api/v1/webhooks/secret', headers });
    expect(secretOf(current)).toEqual(secretOf(rotated));
    // Nothing was counted against the daily limit.
    expect(gw.access.used.get('acc_free') ?? 0).toBe(0);

    // Another account has a secret of its own.
    const other = await gw.app.inject({
      method: 'GET',
      url: '/api/v1/webhooks/secret',
      headers: { 'x-api-key': KEYS.pro },
    });
    expect(other.json().secret).not.toBe(body.secret);
  });

  it('503 when the gateway runs without the webhook module', async () => {
    const gw = await buildTestGateway();
    apps.push(gw.app);
    const res = await gw.app.inject({
      method: 'GET',
      url: '/api/v1/webhooks/secret',
      headers: { 'x-api-key': KEYS.free },
    });
    expect(res.statusCode).toBe(503);
    expect(res.json().error.code).toBe('SERVICE_UNAVAILABLE');
  });

  it('OpenAPI lists both under the Webhooks tag, 201 for the rotation, without limit headers', async () => {
    const gw = await gatewayWithWebhooks();
    const doc = (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const path = doc.paths['/api/v1/webhooks/secret'];
    expect(path.post.operationId).toBe('rotateWebhookSecret');
    expect(path.get.operationId).toBe('getWebhookSecret');
    expect(doc.tags).toContainEqual({ name: 'Webhooks' });
    expect(path.post.tags).toEqual(['Webhooks']);
    expect(path.get.tags).toEqual(['Webhooks']);
    expect(Object.keys(path.post.responses)).toContain('201');
    expect(Object.keys(path.get.responses)).toContain('200');
    expect(Object.keys(path.post.responses['201'].headers)).toEqual(['X-Request-Id']);
    expect(path.post.responses['201'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/WebhookSecret',
    });
    expect(doc.components.schemas.WebhookSecret.required).toEqual([
      'secret',
      'created_at',
      'previous_secret_expires_at',
      'request_id',
    ]);
    expect(path.post.parameters.map((p: { name: string }) => p.name)).not.toContain('Idempotency-Key');
  });
});

describe('/admin/v1/accounts/{id}/webhook-secret', () => {
  async function setup() {
    replicas = await startReplicas(1);
    const m = replicas.modules[0]!;
    const webhooks = createWebhookModule({
      store: replicas.store,
      clock: replicas.clock,
      logger: silentLogger,
      config: loadJobServiceConfig({}, { embedded: true }),
      pepper: PEPPER,
    });
    const gateway = await buildTestGateway({
      deps: {
        access: m.access,
        credits: m.credits,
        idempotency: m.idempotency,
        clock: replicas.clock,
        webhookSecrets: webhookSecretsApiOf(webhooks.secrets),
      },
    });
    apps.push(gateway.app);
    const admin = await buildAdminApp({
      config: gateway.config,
      access: m,
      publicApp: gateway.app,
      webhookSecrets: webhookSecretsApiOf(webhooks.secrets),
    });
    apps.push(admin);
    const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
    const created = await admin.inject({
      method: 'POST',
      url: '/admin/v1/accounts',
      headers: auth,
      payload: { tier: 'free' },
    });
    const { account_id: id, api_key: apiKey } = created.json() as { account_id: string; api_key: string };
    return { admin, publicApp: gateway.app, auth, id, apiKey };
  }

  it('reads and rotates the account secret the public route answers; 401 without the token, 404 for no account', async () => {
    const { admin, publicApp, auth, id, apiKey } = await setup();
    const url = `/admin/v1/accounts/${id}/webhook-secret`;
    const read = await admin.inject({ method: 'GET', url, headers: auth });
    expect(read.statusCode).toBe(200);
    expect(read.headers['cache-control']).toBe('no-store');
    expect(read.json()).toMatchObject({
      secret: expect.stringMatching(SECRET),
      previous_secret_expires_at: null,
    });
    const viaKey = await publicApp.inject({
      method: 'GET',
      url: '/api/v1/webhooks/secret',
      headers: { 'x-api-key': apiKey },
    });
    // The same secret; the public answer adds its request_id (the admin API's answers do not).
    expect(secretOf(viaKey)).toEqual(read.json());

    const rotated = await admin.inject({ method: 'POST', url, headers: auth });
    expect(rotated.statusCode).toBe(201);
    expect(rotated.json().secret).not.toBe(read.json().secret);
    expect(rotated.json().previous_secret_expires_at).not.toBeNull();

    expect((await admin.inject({ method: 'GET', url })).statusCode).toBe(401);
    expect((await admin.inject({ method: 'POST', url })).statusCode).toBe(401);
    const missing = await admin.inject({
      method: 'GET',
      url: '/admin/v1/accounts/acct_00000000000000000000000000000000/webhook-secret',
      headers: auth,
    });
    expect(missing.statusCode).toBe(404);
  });
});
