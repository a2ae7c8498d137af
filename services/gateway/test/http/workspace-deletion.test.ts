/**
 * Deleting a workspace (DELETE /admin/v1/accounts/{id}) end to end on the real access module with
 * two gateway replicas sharing the stores, the audit log and the job service's jobs, watches and
 * webhook secrets in process: a workspace with a primary key, named keys, a finished job with its
 * results, a queued job, a watch, a webhook secret, audit events and an idempotency record is
 * exported by the admin twin of the export, then deleted. Afterwards each of its keys is 401 (on
 * both replicas, whose key caches held them), the admin GET, the export and a second DELETE are
 * 404, no collection holds a document of the account, no key-value entry names it, another
 * workspace is untouched, and `AccountDeleted` went out on accounts.v1 as a CloudEvent. A deletion
 * that fails half-way leaves the keys refused and is finished by the next call. On the in-memory
 * document store and on the MongoDB-compatible server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { accountDeletedV1 } from '@subx/contracts';
import { randomUUID } from 'node:crypto';
import type { DeliveredMessage, DocumentStore, Filter } from '@subx/ports';
import { createInMemoryDocumentStore, createMongoDocumentStore, silentLogger } from '@subx/ports';
import { describeWithEngine } from '@subx/testing/engines';
import type { AccountDataApi } from '@subx/backends';
import { buildAdminApp } from '../../src/admin/listener.ts';
import { createWorkspaceDeletion } from '../../src/deletion/delete-workspace.ts';
import type { WorkspaceDeletion } from '../../src/deletion/delete-workspace.ts';
import { TEST_ADMIN_TOKEN } from '../access/support.ts';
import { accountsGateway } from './accounts-support.ts';
import type { AccountsHarness } from './accounts-support.ts';
import { createAccountDataEraser } from '../../../jobs/src/account-data.ts';

const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const VIDEOS = ['dQw4w9WgXcQ', 'jNQXAC9IVRw', '9bZkp7q19f0'];
const urlOf = (id: string) => `https://www.youtube.com/watch?v=${id}`;
const TOPIC = 'accounts.v1';

/** Every collection that holds a workspace's documents, with the filter that finds them. */
const OWNED: [collection: string, filter: (id: string, jobIds: string[]) => Filter][] = [
  ['accounts', (id) => ({ _id: id })],
  ['api_keys', (id) => ({ account_id: id })],
  ['audit_events', (id) => ({ account_id: id })],
  ['workspace_members', (id) => ({ account_id: id })],
  ['daily_requests', (id) => ({ account_id: id })],
  ['jobs', (id) => ({ account_id: id })],
  ['job_items', (_id, jobIds) => ({ _id: { $in: jobIds } })],
  ['job_results', (_id, jobIds) => ({ job_id: { $in: jobIds } })],
  ['watches', (id) => ({ account_id: id })],
  ['webhook_secrets', (id) => ({ _id: id })],
  ['webhook_deliveries', (id) => ({ account_id: id })],
];

function deletionSuite(makeStore: () => DocumentStore) {
  let h: AccountsHarness;
  let admin: FastifyInstance;
  let deletion: WorkspaceDeletion;
  const published: DeliveredMessage[] = [];
  /** Fails the job service's part while set (a crash half-way). */
  const jobServiceDown = { on: false };

  beforeAll(async () => {
    h = await accountsGateway({ replicas: 2, store: makeStore() });
    const { replicas, kv, audit, jobService } = h;
    const m = replicas.modules[0]!;
    const eraser = createAccountDataEraser({
      store: replicas.store,
      jobs: jobService.jobs,
      clock: replicas.clock,
      sleep: async (ms) => void replicas.clock.advance(ms),
    });
    const accountData: AccountDataApi = {
      delete: async (accountId) => {
        if (jobServiceDown.on) throw new Error('the job service went away');
        return eraser(accountId);
      },
    };
    deletion = createWorkspaceDeletion({
      store: replicas.store,
      kv,
      bus: replicas.bus,
      clock: replicas.clock,
      logger: silentLogger,
      accounts: m.accounts,
      accountData,
      topic: TOPIC,
      flushRequestCounts: () => m.requestLog.flush(),
      requestCountsSettleMs: 0,
    });
    await deletion.relay.init();
    await replicas.bus.ensureTopics([TOPIC]);
    await replicas.bus.subscribe({
      groupId: 'deletion-test',
      topics: [TOPIC],
      fromBeginning: true,
      handler: async (message) => void published.push(message),
    });
    admin = await buildAdminApp({
      config: h.gw.config,
      access: m,
      publicApp: h.gw.app,
      ...jobService.api,
      audit,
      deletion,
    });
  });
  afterAll(async () => {
    await admin?.close();
    await h?.stop();
  });

  async function call(
    key: string,
    method: 'GET' | 'POST',
    url: string,
    body?: unknown,
    idempotencyKey?: string,
  ) {
    return h.gw.app.inject({
      method,
      url,
      headers: {
        'x-api-key': key,
        ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      remoteAddress: '198.51.100.30',
    });
  }

  const adminCall = (method: 'GET' | 'DELETE', url: string) => admin.inject({ method, url, headers: auth });

  /** Runs the queued jobs to their end (bounded). */
  async function drain(): Promise<void> {
    for (let i = 0; i < 100; i += 1) {
      await h.runner.pollOnce();
      await h.runner.idle();
      const open = await h.replicas.store
        .collection('jobs')
        .countDocuments({ status: { $in: ['queued', 'running'] } });
      if (open === 0) return;
    }
    throw new Error('the jobs did not finish');
  }

  /** A workspace with everything a workspace can own; its keys and ids. */
  async function populated() {
    const owner = await h.newOwner();
    const keys = [owner.key];
    for (const name of ['reader', 'ci']) {
      const made = await call(owner.key, 'POST', '/api/v1/keys', { name, scopes: ['transcripts:read'] });
      expect(made.statusCode, made.body).toBe(201);
      keys.push(made.json().api_key as string);
    }
    const job = await call(
      owner.key,
      'POST',
      '/api/v1/jobs',
      { source: { type: 'urls', urls: VIDEOS.map(urlOf) } },
      `idem-${owner.id}`,
    );
    expect(job.statusCode, job.body).toBe(202);
    const watch = await call(owner.key, 'POST', '/api/v1/watches', {
      source: { type: 'playlist', url: 'https://www.youtube.com/playlist?list=PLdeleted' },
      interval_minutes: 60,
    });
    expect(watch.statusCode, watch.body).toBe(201);
    expect((await call(owner.key, 'GET', '/api/v1/webhooks/secret')).statusCode).toBe(200);
    await drain();
    // One more, still queued when the workspace goes: it is canceled, then deleted.
    const queued = await call(owner.key, 'POST', '/api/v1/jobs', {
      source: { type: 'urls', urls: [urlOf(VIDEOS[0]!)] },
    });
    expect(queued.statusCode, queued.body).toBe(202);
    const store = h.replicas.store;
    await store.collection('workspace_members').insertOne({ _id: `mem_${owner.id}`, account_id: owner.id });
    await store.collection('webhook_deliveries').insertOne({
      _id: `dlv_${owner.id}`,
      account_id: owner.id,
      url: 'https://receiver.example/hook',
      status: 'pending',
    });
    await h.replicas.modules[0]!.requestLog.flush();
    return { ...owner, keys, jobIds: [job.json().job_id as string, queued.json().job_id as string] };
  }

  async function leftovers(accountId: string, jobIds: string[]) {
    const found: Record<string, number> = {};
    for (const [name, filter] of OWNED) {
      const n = await h.replicas.store.collection(name).countDocuments(filter(accountId, jobIds));
      if (n > 0) found[name] = n;
    }
    const cached = h.kv.keys().filter((key) => key.includes(accountId));
    return { found, cached };
  }

  describe('DELETE /admin/v1/accounts/{id}', () => {
    it('revokes every key on every replica, empties every store of the workspace and announces it', async () => {
      const other = await populated();
      const owner = await populated();
      const before = await leftovers(owner.id, owner.jobIds);
      for (const name of [
        'accounts',
        'api_keys',
        'audit_events',
        'jobs',
        'job_results',
        'watches',
        'webhook_secrets',
      ]) {
        expect(before.found[name], name).toBeGreaterThan(0);
      }
      expect(before.cached.some((key) => key.startsWith('idem:'))).toBe(true);

      const exported = await adminCall('GET', `/admin/v1/accounts/${owner.id}/export?member_id=usr_owner`);
      expect(exported.statusCode).toBe(200);
      expect(exported.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
      const lines = exported.body
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; job_id?: string });
      expect(lines[0]).toMatchObject({ type: 'export', account_id: owner.id });
      expect(lines.at(-1)).toEqual({ type: 'end', lines: lines.length - 1 });
      expect(
        lines
          .filter((l) => l.type === 'job')
          .map((l) => l.job_id)
          .sort(),
      ).toEqual([...owner.jobIds].sort());
      expect(lines.filter((l) => l.type === 'job_result')).toHaveLength(VIDEOS.length);
      expect(lines.filter((l) => l.type === 'key')).toHaveLength(3);

      // Both replicas hold every key in their caches before the deletion.
      for (const module of h.replicas.modules) {
        for (const key of owner.keys) expect(await module.access.authenticate(key)).not.toBeNull();
      }

      const deleted = await adminCall('DELETE', `/admin/v1/accounts/${owner.id}?member_id=usr_owner`);
      expect(deleted.statusCode, deleted.body).toBe(200);
      expect(deleted.json()).toMatchObject({
        account_id: owner.id,
        canceled_jobs: 1,
        removed: {
          account: 1,
          api_keys: 3,
          jobs: 2,
          job_results: VIDEOS.length,
          watches: 1,
          webhook_secrets: 1,
          webhook_deliveries: 1,
          workspace_members: 1,
          daily_requests: 1,
        },
      });
      expect(deleted.json().removed.audit_events).toBeGreaterThanOrEqual(3);
      expect(deleted.json().removed.cache_entries).toBeGreaterThanOrEqual(2);

      for (const key of owner.keys) {
        expect((await call(key, 'GET', '/api/v1/account')).statusCode).toBe(401);
        for (const module of h.replicas.modules) expect(await module.access.authenticate(key)).toBeNull();
      }
      expect((await adminCall('GET', `/admin/v1/accounts/${owner.id}`)).statusCode).toBe(404);
      expect((await adminCall('GET', `/admin/v1/accounts/${owner.id}/export`)).statusCode).toBe(404);
      const again = await adminCall('DELETE', `/admin/v1/accounts/${owner.id}`);
      expect(again.statusCode).toBe(404);
      expect(again.json().error.code).toBe('NOT_FOUND');
      expect(await leftovers(owner.id, owner.jobIds)).toEqual({ found: {}, cached: [] });

      // Another workspace keeps everything.
      expect((await call(other.key, 'GET', '/api/v1/account')).statusCode).toBe(200);
      expect((await leftovers(other.id, other.jobIds)).found.jobs).toBe(2);

      expect(await deletion.relay.flush()).toBe(1);
      await expect.poll(() => published.length, { timeout: 5_000 }).toBe(1);
      const [event] = published;
      expect(event!.key).toBe(owner.id);
      expect(event!.headers).toMatchObject({
        ce_type: 'com.subx.account-deleted.v1',
        ce_source: '//subx/gateway',
        ce_subject: owner.id,
        ce_dataschema: 'proto:subx.events.v1.AccountDeleted',
      });
      const decoded = accountDeletedV1.AccountDeleted.decode(event!.value);
      expect(decoded.envelope).toMatchObject({ accountId: owner.id, occurredAt: deleted.json().deleted_at });
      expect(decoded.requestedAt).toBe(deleted.json().requested_at);
    });

    it('a deletion that fails half-way leaves the keys refused and the workspace unknown; the next call finishes it', async () => {
      const owner = await populated();
      jobServiceDown.on = true;
      const failed = await adminCall('DELETE', `/admin/v1/accounts/${owner.id}`);
      jobServiceDown.on = false;
      expect(failed.statusCode).toBe(503);
      expect(failed.json().error.code).toBe('SERVICE_UNAVAILABLE');
      for (const key of owner.keys) expect((await call(key, 'GET', '/api/v1/account')).statusCode).toBe(401);
      expect((await adminCall('GET', `/admin/v1/accounts/${owner.id}`)).statusCode).toBe(404);
      expect((await leftovers(owner.id, owner.jobIds)).found.jobs).toBe(2);

      const finished = await adminCall('DELETE', `/admin/v1/accounts/${owner.id}`);
      expect(finished.statusCode, finished.body).toBe(200);
      expect(finished.json().removed).toMatchObject({ account: 1, jobs: 2, watches: 1 });
      expect(await leftovers(owner.id, owner.jobIds)).toEqual({ found: {}, cached: [] });
      expect((await adminCall('DELETE', `/admin/v1/accounts/${owner.id}`)).statusCode).toBe(404);
      // One event, however many calls it took.
      await deletion.relay.flush();
      await expect.poll(() => published.filter((m) => m.key === owner.id).length, { timeout: 5_000 }).toBe(1);
    });

    it('is 503 on a gateway without deletion, and 404 for an unknown workspace', async () => {
      const unknown = await adminCall('DELETE', '/admin/v1/accounts/acct_0123456789abcdef0123456789abcdef');
      expect(unknown.statusCode).toBe(404);
      const bare = await buildAdminApp({
        config: h.gw.config,
        access: h.replicas.modules[0]!,
        publicApp: h.gw.app,
      });
      const owner = await h.newOwner();
      const refused = await bare.inject({
        method: 'DELETE',
        url: `/admin/v1/accounts/${owner.id}`,
        headers: auth,
      });
      expect(refused.statusCode).toBe(503);
      expect((await call(owner.key, 'GET', '/api/v1/account')).statusCode).toBe(200);
      await bare.close();
    });
  });
}

describe('deleting a workspace (in-memory store)', () => {
  deletionSuite(() => createInMemoryDocumentStore());
});

describeWithEngine('mongo', 'deleting a workspace on the MongoDB-compatible server', (mongoUrl) => {
  const stores: ReturnType<typeof createMongoDocumentStore>[] = [];
  afterAll(async () => {
    await stores[0]?.dropDatabase().catch(() => undefined);
    for (const store of stores) await store.close();
  });
  deletionSuite(() => {
    const store = createMongoDocumentStore({
      url: mongoUrl,
      dbName: `deletion_it_${randomUUID().slice(0, 8)}`,
    });
    stores.push(store);
    return store;
  });
});
