/**
 * Taking an account back after a compromise (POST /admin/v1/accounts/{id}/secure, as the
 * dashboard's password reset and an operator's revocation call it): the watches and the open jobs
 * the leaked key created stop, the key is replaced (or revoked), and the webhook signing secret is
 * replaced with no grace period, so the old secret neither signs nor is listed. A watch stored
 * before watches carried their key counts as the key's. On the in-memory document store and on the
 * MongoDB-compatible server.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createInMemoryDocumentStore, createMongoDocumentStore, silentLogger } from '@subx/ports';
import type { DocumentStore } from '@subx/ports';
import { describeWithEngine } from '@subx/testing/engines';
import { DEFAULT_PRICING } from '@subx/credits';
import { TEST_ADMIN_TOKEN, startReplicas } from '../access/support.ts';
import type { Replicas } from '../access/support.ts';
import type { Account } from '@subx/credits';
import { buildAdminApp } from '../../src/admin/listener.ts';
import { loadJobServiceConfig } from '../../../jobs/src/config.ts';
import type { JobOptions } from '../../../jobs/src/jobs/model.ts';
import { createJobNotifier } from '../../../jobs/src/jobs/notify.ts';
import { createJobsService } from '../../../jobs/src/jobs/service.ts';
import { createJobStore } from '../../../jobs/src/jobs/store.ts';
import { createWatchesService } from '../../../jobs/src/watches/service.ts';
import { createWatchStore } from '../../../jobs/src/watches/store.ts';
import { createWebhookModule } from '../../../jobs/src/webhooks/index.ts';
import { buildTestGateway, VIDEO_URL } from './support.ts';
import { jobsApiOf, watchesApiOf, webhookSecretsApiOf } from '../../../jobs/src/api.ts';

const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const PLAYLIST = 'https://www.youtube.com/playlist?list=PLrecovery';
const jobOptions: JobOptions = {
  language: 'en',
  format: 'json',
  include_timestamps: true,
  include: [],
  translate: false,
};

let replicas: Replicas | undefined;
const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
  await replicas?.stop();
  replicas = undefined;
});

async function setup(documents: DocumentStore) {
  replicas = await startReplicas(1, { store: documents });
  const m = replicas.modules[0]!;
  const config = loadJobServiceConfig({}, { embedded: true });
  const webhooks = createWebhookModule({
    store: documents,
    clock: replicas.clock,
    logger: silentLogger,
    config,
    pepper: 'account-recovery-test-pepper-0123456789',
  });
  const jobStore = createJobStore(documents);
  await jobStore.ensureIndexes();
  const jobs = createJobsService({
    store: jobStore,
    notifier: createJobNotifier({
      store: jobStore,
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
    logger: silentLogger,
    instanceId: 'account-recovery',
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
  const clock = replicas.clock;

  const created = (
    await admin.inject({ method: 'POST', url: '/admin/v1/accounts', headers: auth, payload: { tier: 'pro' } })
  ).json<{ account_id: string; api_key: string }>();
  const id = created.account_id;
  /** The account as a request with this key is admitted (null: the key does not work). */
  const withKey = (apiKey: string) => m.access.authenticate(apiKey);
  const watch = async (account: Account) =>
    (
      await watches.create(
        account,
        {
          source: { type: 'playlist', url: PLAYLIST },
          interval_minutes: 60,
          backfill: false,
          options: jobOptions,
        },
        `req_${randomUUID()}`,
      )
    ).watch_id;
  const job = async (account: Account) =>
    (
      await jobs.create(
        account,
        { source: { type: 'urls', urls: [VIDEO_URL] }, options: jobOptions },
        `req_${randomUUID()}`,
      )
    ).job_id;
  const secure = (key: 'replace' | 'revoke', account = id) =>
    admin.inject({
      method: 'POST',
      url: `/admin/v1/accounts/${account}/secure`,
      headers: auth,
      payload: { key },
    });
  const due = async () => (await watchStore.due(clock.now(), 100)).map((w) => w._id);
  return {
    admin,
    m,
    webhooks,
    jobs,
    watches,
    clock,
    id,
    apiKey: created.api_key,
    withKey,
    watch,
    job,
    secure,
    due,
  };
}

function recoverySuite(makeStore: () => DocumentStore) {
  it('a reset stops what the old key set going, replaces the key and the webhook secret with no grace', async () => {
    const t = await setup(makeStore());
    const intruder = (await t.withKey(t.apiKey))!;
    expect(intruder.keyId).toMatch(/^key_/);
    const oldSecret = (await t.webhooks.secrets.current(t.id)).secret;
    const badWatch = await t.watch(intruder);
    const badJob = await t.job(intruder);
    // A watch stored before watches carried their key: it may be the intruder's as well.
    const legacyWatch = await t.watch({ id: t.id, tier: 'pro' });
    expect(await t.due()).toEqual(expect.arrayContaining([badWatch, legacyWatch]));

    const res = await t.secure('replace');
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const secured = res.json<{
      api_key: string;
      paused_watches: string[];
      canceled_jobs: string[];
      webhook_secret_rotated: boolean;
    }>();
    expect(secured).toEqual({
      api_key: expect.stringMatching(/^sxk_/),
      webhook_secret_rotated: true,
      paused_watches: [badWatch, legacyWatch].sort(),
      canceled_jobs: [badJob],
      revoked_keys: [],
    });

    // The key: the old one is refused, the new one works.
    expect(await t.withKey(t.apiKey)).toBeNull();
    expect((await t.withKey(secured.api_key))?.id).toBe(t.id);
    // The webhook secret differs, and the old one neither signs nor is listed.
    const after = await t.admin.inject({
      method: 'GET',
      url: `/admin/v1/accounts/${t.id}/webhook-secret`,
      headers: auth,
    });
    expect(after.json().secret).not.toBe(oldSecret);
    expect(after.json().previous_secret_expires_at).toBeNull();
    expect(await t.webhooks.secrets.signingSecrets(t.id)).toEqual([after.json().secret]);
    // The intruder's job is canceled; its watch is paused and the scheduler passes it by.
    expect((await t.jobs.get(t.id, badJob)).status).toBe('canceled');
    expect(await t.due()).toEqual([]);
    const listed = (
      await t.admin.inject({ method: 'GET', url: `/admin/v1/accounts/${t.id}/watches`, headers: auth })
    ).json<{
      watches: { watch_id: string; paused: { reason: string } | null }[];
    }>().watches;
    expect(listed.find((w) => w.watch_id === badWatch)?.paused).toEqual({
      at: expect.any(String),
      reason: 'key_compromised',
    });
    expect(listed.find((w) => w.watch_id === legacyWatch)?.paused).not.toBeNull();

    // The owner resumes it: due at once, and runs on.
    const resumed = await t.admin.inject({
      method: 'POST',
      url: `/admin/v1/accounts/${t.id}/watches/${badWatch}/resume`,
      headers: auth,
    });
    expect(resumed.statusCode).toBe(200);
    expect(resumed.json().paused).toBeNull();
    expect(await t.due()).toEqual([badWatch]);
  });

  it('an operator revocation stops what the current key made, once; a revoked key stays revoked', async () => {
    const t = await setup(makeStore());
    const first = (await t.secure('replace')).json<{ api_key: string }>();
    const owner = (await t.withKey(first.api_key))!;
    const ownerWatch = await t.watch(owner);
    const ownerJob = await t.job(owner);
    // An operator revokes the key for compromise: now the new key's things stop, once.
    const revoked = (await t.secure('revoke')).json();
    expect(revoked).toMatchObject({ api_key: null, paused_watches: [ownerWatch], canceled_jobs: [ownerJob] });
    expect(await t.withKey(first.api_key)).toBeNull();
    const again = (await t.secure('revoke')).json();
    expect(again).toMatchObject({ api_key: null, paused_watches: [], canceled_jobs: [] });
    // A revoked key stays revoked under `replace` too: a reset makes no key where there was none.
    expect((await t.secure('replace')).json().api_key).toBeNull();
  });

  it('a reset revokes every named key (through the admin API) and stops the jobs they made', async () => {
    const t = await setup(makeStore());
    const made = await t.admin.inject({
      method: 'POST',
      url: `/admin/v1/accounts/${t.id}/keys?member_id=usr_owner`,
      headers: auth,
      payload: { name: 'intruder', scopes: ['jobs'] },
    });
    expect(made.statusCode, made.body).toBe(201);
    const named = made.json<{ id: string; api_key: string }>();
    const holder = (await t.withKey(named.api_key))!;
    expect(holder.keyId).toBe(named.id);
    const badJob = await t.job(holder);

    const secured = (await t.secure('revoke')).json<{ revoked_keys: string[]; canceled_jobs: string[] }>();
    expect(secured.revoked_keys).toEqual([named.id]);
    expect(secured.canceled_jobs).toContain(badJob);
    expect(await t.withKey(named.api_key)).toBeNull();
    const listed = await t.admin.inject({
      method: 'GET',
      url: `/admin/v1/accounts/${t.id}/keys`,
      headers: auth,
    });
    const keys = listed.json<{ keys: { id: string; status: string; primary: boolean }[] }>().keys;
    expect(keys.map((k) => [k.primary, k.status])).toEqual([
      [true, 'revoked'],
      [false, 'revoked'],
    ]);
    // Nothing is left to revoke the second time.
    expect((await t.secure('revoke')).json<{ revoked_keys: string[] }>().revoked_keys).toEqual([]);
  });

  it('404 for an unknown account or watch, 400 for a bad body', async () => {
    const t = await setup(makeStore());
    expect((await t.secure('replace', `acct_${'0'.repeat(32)}`)).statusCode).toBe(404);
    const bad = await t.admin.inject({
      method: 'POST',
      url: `/admin/v1/accounts/${t.id}/secure`,
      headers: auth,
      payload: { key: 'keep' },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('INVALID_REQUEST');
    const unknown = await t.admin.inject({
      method: 'POST',
      url: `/admin/v1/accounts/${t.id}/watches/wat_nope/resume`,
      headers: auth,
    });
    expect(unknown.statusCode).toBe(404);
  });
}

describe('securing an account after a compromise (in-memory store)', () => {
  recoverySuite(() => createInMemoryDocumentStore());
});

describeWithEngine(
  'mongo',
  'securing an account after a compromise on the MongoDB-compatible server',
  (mongoUrl) => {
    const stores: DocumentStore[] = [];
    afterAll(async () => {
      for (const s of stores) await s.close();
    });
    recoverySuite(() => {
      const store = createMongoDocumentStore({
        url: mongoUrl,
        dbName: `recovery_it_${randomUUID().slice(0, 8)}`,
      });
      stores.push(store);
      return store;
    });
  },
);
