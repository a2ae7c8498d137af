/**
 * The admin listener's /openapi.json (admin/openapi.ts, from admin/operations.ts): a
 * valid OpenAPI 3.1 document naming every route fastify serves there, real answers that match
 * their documented schemas, and invalid requests that get the documented 400.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { FastifyInstance } from 'fastify';
import { createInMemoryDocumentStore } from '@subx/ports';
import { ERROR_CATALOG } from '@subx/errors';
import type { ErrorCode } from '@subx/errors';
import { DEFAULT_PRICING } from '@subx/credits';
import { TEST_ADMIN_TOKEN, startReplicas } from '../access/support.ts';
import type { Replicas } from '../access/support.ts';
import { buildAdminApp } from '../../src/admin/listener.ts';
import { loadJobServiceConfig } from '../../../jobs/src/config.ts';
import type { JobOptions } from '../../../jobs/src/jobs/model.ts';
import { createJobNotifier } from '../../../jobs/src/jobs/notify.ts';
import { createJobsService } from '../../../jobs/src/jobs/service.ts';
import { createJobStore } from '../../../jobs/src/jobs/store.ts';
import { ADMIN_OPERATION_SPECS } from '../../src/admin/operations.ts';
import { createWatchesService } from '../../../jobs/src/watches/service.ts';
import { createWatchStore } from '../../../jobs/src/watches/store.ts';
import { createWebhookModule } from '../../../jobs/src/webhooks/index.ts';
import { buildTestGateway, VIDEO_URL } from './support.ts';
import { jobsApiOf, watchesApiOf, webhookSecretsApiOf } from '../../../jobs/src/api.ts';

const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const silent = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
let replicas: Replicas | undefined;
const apps: FastifyInstance[] = [];

afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
  await replicas?.stop();
  replicas = undefined;
});

/** The admin app with every optional part (jobs, watches, webhooks), beside a real public app. */
async function setup() {
  replicas = await startReplicas(1);
  const m = replicas.modules[0]!;
  const config = loadJobServiceConfig({}, { embedded: true });
  const webhooks = createWebhookModule({
    store: replicas.store,
    clock: replicas.clock,
    logger: silent,
    config,
    pepper: 'admin-openapi-test-pepper-0123456789',
  });
  const documents = createInMemoryDocumentStore();
  const store = createJobStore(documents);
  await store.ensureIndexes();
  const jobs = createJobsService({
    store,
    notifier: createJobNotifier({
      store,
      events: { publish: async () => {} },
      webhooks: { enqueue: async () => {} },
      logger: { warn: () => {} },
    }),
    webhooks: null,
    credits: m.credits,
    pricing: DEFAULT_PRICING,
    clock: replicas.clock,
    resultsTtlMs: config.JOB_RESULTS_TTL,
  });
  const gateway = await buildTestGateway({
    deps: { access: m.access, credits: m.credits, idempotency: m.idempotency, clock: replicas.clock },
  });
  apps.push(gateway.app);
  const watchStore = createWatchStore(documents);
  await watchStore.ensureIndexes();
  const watches = createWatchesService({
    store: watchStore,
    jobs,
    extractor: gateway.backends.extractor,
    accountOf: async () => null,
    events: { publish: async () => {} },
    webhooks: null,
    pricing: DEFAULT_PRICING,
    clock: replicas.clock,
    logger: silent,
    instanceId: 'admin-openapi',
    config,
  });
  const admin = await buildAdminApp({
    config: gateway.config,
    access: m,
    publicApp: gateway.app,
    jobs: jobsApiOf(jobs, { extractor: gateway.backends.extractor, lookupDeadlineMs: 5_000 }),
    watches: watchesApiOf(watches),
    webhookSecrets: webhookSecretsApiOf(webhooks.secrets),
  });
  apps.push(admin);
  return { admin, jobs, watches };
}

/**
 * Every (method, path) fastify routes, read from its route tree (`printRoutes`): each line is one
 * segment, indented four characters per level, with its methods in parentheses when it is a route.
 */
function fastifyRoutes(app: FastifyInstance): string[] {
  const stack: string[] = [];
  const routes: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+)(?: \(([^)]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    stack.push(match[2]!);
    for (const method of match[3]?.split(', ') ?? []) routes.push(`${method} ${stack.join('')}`);
  }
  return routes.sort();
}

describe('admin /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document with the bearer scheme, served without the token', async () => {
    const { admin } = await setup();
    const res = await admin.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const doc = res.json();
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(doc.components.securitySchemes).toEqual({
      AdminToken: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
    for (const spec of ADMIN_OPERATION_SPECS) {
      const op = doc.paths[spec.path][spec.method.toLowerCase()];
      expect(op.security, spec.operationId).toEqual([{ AdminToken: [] }]);
      for (const code of ['UNAUTHORIZED', 'RATE_LIMITED', ...spec.errors] as ErrorCode[]) {
        const documented = op.responses[String(ERROR_CATALOG[code].status)];
        expect(
          documented?.content['application/json'].examples[code],
          `${spec.operationId} ${code}`,
        ).toBeDefined();
      }
    }
  });

  it('lists every route fastify serves on the admin listener, and no other', async () => {
    const { admin } = await setup();
    const doc = (await admin.inject({ method: 'GET', url: '/openapi.json' })).json();
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(
      ([path, operations]) =>
        Object.keys(operations).map(
          (method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`,
        ),
    );
    expect(fastifyRoutes(admin)).toEqual([...documented, 'GET /openapi.json'].sort());
    // The parser reads what it should: the table has twenty-eight rows, all routed here.
    expect(documented).toHaveLength(28);
  });

  it('real answers match the documented response schemas', async () => {
    const { admin, jobs, watches } = await setup();
    const doc = (await admin.inject({ method: 'GET', url: '/openapi.json' })).json();
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    const check = async (method: string, url: string, path: string, payload?: unknown) => {
      const res = await admin.inject({
        method: method as 'GET',
        url,
        headers: auth,
        ...(payload === undefined ? {} : { payload: payload as object }),
      });
      const op = doc.paths[path][method.toLowerCase()];
      const [status] = Object.keys(op.responses);
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(Number(status));
      const schema = op.responses[status!].content?.['application/json']?.schema;
      if (!schema) return expect(res.body).toBe('');
      const validate = ajv.compile(schema);
      expect(validate(res.json()), `${method} ${url}: ${JSON.stringify(validate.errors)}`).toBe(true);
      return res.json();
    };
    const created = await check('POST', '/admin/v1/accounts', '/admin/v1/accounts', {
      tier: 'pro',
      email: 'ops@example.com',
    });
    const id = created.account_id as string;
    const account = `/admin/v1/accounts/${id}`;
    await jobs.create(
      { id, tier: 'pro' },
      { source: { type: 'urls', urls: [VIDEO_URL] }, options: jobOptions },
      'r1',
    );
    const A = '/admin/v1/accounts/{id}';
    await check('GET', account, A);
    await check('PATCH', account, A, { add_credits: 5 });
    await check('POST', `${account}/api-key`, `${A}/api-key`);
    await check('GET', `${account}/usage?from=2026-03-01&to=2026-03-03`, `${A}/usage`);
    await check('GET', `${account}/limits`, `${A}/limits`);
    await check('GET', `${account}/retention`, `${A}/retention`);
    await check('PATCH', `${account}/retention?member_id=usr_1`, `${A}/retention`, { chunks_days: 3 });
    await check('POST', `${account}/calls`, `${A}/calls`, {
      path: '/api/v1/validate',
      query: { url: VIDEO_URL },
    });
    await check('GET', `${account}/webhook-secret`, `${A}/webhook-secret`);
    await check('POST', `${account}/webhook-secret`, `${A}/webhook-secret`);
    const page = await check('GET', `${account}/jobs?limit=5`, `${A}/jobs`);
    expect(page.jobs).toHaveLength(1);
    const watch = await watches.create(
      { id, tier: 'pro' },
      {
        source: { type: 'search', query: 'lofi' },
        interval_minutes: 60,
        backfill: false,
        options: jobOptions,
      },
      'r2',
    );
    const listed = await check('GET', `${account}/watches`, `${A}/watches`);
    expect(listed.watches.map((w: { watch_id: string }) => w.watch_id)).toEqual([watch.watch_id]);
    const other = await check('POST', '/admin/v1/accounts', '/admin/v1/accounts', { tier: 'pro' });
    // Another account's watch is not found through this one.
    const foreign = await admin.inject({
      method: 'DELETE',
      url: `/admin/v1/accounts/${String(other.account_id)}/watches/${watch.watch_id}`,
      headers: auth,
    });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.code).toBe('NOT_FOUND');
    await check('DELETE', `${account}/watches/${watch.watch_id}`, `${A}/watches/{watch_id}`);
    expect((await check('GET', `${account}/watches`, `${A}/watches`)).watches).toEqual([]);
    const key = await check('POST', `${account}/keys?member_id=usr_1`, `${A}/keys`, {
      name: 'reader',
      scopes: ['transcripts:read'],
    });
    expect((await check('GET', `${account}/keys`, `${A}/keys`)).keys).toHaveLength(2);
    await check('DELETE', `${account}/keys/${String(key.id)}`, `${A}/keys/{key_id}`);
    await check('DELETE', `${account}/api-key`, `${A}/api-key`);
  });

  it('answers an invalid request with the documented 400, naming the field', async () => {
    const { admin } = await setup();
    const doc = (await admin.inject({ method: 'GET', url: '/openapi.json' })).json();
    const errorSchema = new Ajv({ strict: false }).compile(doc.components.schemas.Error);
    const id = (
      await admin.inject({
        method: 'POST',
        url: '/admin/v1/accounts',
        headers: auth,
        payload: { tier: 'free' },
      })
    ).json().account_id as string;
    const cases = [
      [
        'POST',
        '/admin/v1/accounts',
        '/admin/v1/accounts',
        { tier: 'gold' },
        /^body\.tier must be one of: free, pro, business, enterprise$/,
      ],
      [
        'POST',
        '/admin/v1/accounts',
        '/admin/v1/accounts',
        { tier: 'pro', admin: true },
        /^body has an unknown field 'admin'$/,
      ],
      [
        'PATCH',
        `/admin/v1/accounts/${id}`,
        '/admin/v1/accounts/{id}',
        { credits: -1 },
        /^body\.credits must be >= 0$/,
      ],
      [
        'GET',
        `/admin/v1/accounts/${id}/usage?from=yesterday`,
        '/admin/v1/accounts/{id}/usage',
        undefined,
        /^query\.from is not in the expected form$/,
      ],
      [
        'GET',
        `/admin/v1/accounts/${id}/jobs?limit=0`,
        '/admin/v1/accounts/{id}/jobs',
        undefined,
        /^query\.limit must be >= 1$/,
      ],
      [
        'POST',
        `/admin/v1/accounts/${id}/calls`,
        '/admin/v1/accounts/{id}/calls',
        { path: '/api/v1/batch' },
        /^body\.path must be one of: \/api\/v1\/extract, \/api\/v1\/validate$/,
      ],
    ] as const;
    for (const [method, url, path, payload, message] of cases) {
      const res = await admin.inject({ method, url, headers: auth, ...(payload ? { payload } : {}) });
      expect(res.statusCode, url).toBe(400);
      const body = res.json();
      expect(errorSchema(body)).toBe(true);
      expect(body.error).toMatchObject({ code: 'INVALID_REQUEST', docs_url: '/docs/errors#invalid-request' });
      expect(body.error.message, url).toMatch(message);
      const documented = doc.paths[path][method.toLowerCase()].responses['400'];
      expect(documented.content['application/json'].examples.INVALID_REQUEST, url).toBeDefined();
    }
    // The token is checked before the schema: a bad body without it is 401, not 400.
    const anonymous = await admin.inject({
      method: 'POST',
      url: '/admin/v1/accounts',
      payload: { tier: 'gold' },
    });
    expect(anonymous.statusCode).toBe(401);
  });
});

const jobOptions: JobOptions = {
  language: 'en',
  format: 'json',
  include_timestamps: true,
  include: [],
  translate: false,
};
