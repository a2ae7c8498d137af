/**
 * A workspace's data retention through the public routes and their admin twins, on the real access
 * module and the job service in process (accounts-support.ts): read with `account:read`, changed
 * with `keys:admin` within the tier's caps (400 naming the field and the cap past them), every
 * change in the audit log with who and from where, and a job ending after a change keeps its
 * results as long as the account now says.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { RETENTION_CAPS } from '@subx/contracts/retention';
import { buildAdminApp } from '../../src/admin/listener.ts';
import { TEST_ADMIN_TOKEN } from '../access/support.ts';
import { accountsGateway } from './accounts-support.ts';
import type { AccountsHarness } from './accounts-support.ts';
import { VIDEO_URL } from './support.ts';

const DAY_MS = 86_400_000;
const ADDRESS = '198.51.100.7';
let h: AccountsHarness;
let admin: FastifyInstance;

beforeAll(async () => {
  h = await accountsGateway();
  admin = await buildAdminApp({ config: h.gw.config, access: h.replicas.modules[0]!, publicApp: h.gw.app });
});
afterAll(async () => {
  await admin?.close();
  await h?.stop();
});

async function call(key: string, method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown) {
  const response = await h.gw.app.inject({
    method,
    url,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    remoteAddress: ADDRESS,
  });
  return { status: response.statusCode, headers: response.headers, body: response.json() };
}

async function adminCall(method: 'GET' | 'PATCH', url: string, body?: unknown) {
  const response = await admin.inject({
    method,
    url,
    headers: {
      authorization: `Bearer ${TEST_ADMIN_TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  return { status: response.statusCode, body: response.json() };
}

async function keyWith(owner: string, scopes: string[]): Promise<string> {
  const made = await call(owner, 'POST', '/api/v1/keys', { name: scopes.join(' '), scopes });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  return made.body.api_key as string;
}

const auditOf = async (key: string) =>
  (await call(key, 'GET', '/api/v1/audit')).body.events as Array<Record<string, unknown>>;

describe('/api/v1/account/retention', () => {
  it('answers the defaults (null) with the tier’s caps until something is set', async () => {
    const owner = await h.newOwner();
    const got = await call(owner.key, 'GET', '/api/v1/account/retention');
    expect(got.status).toBe(200);
    expect(got.headers['cache-control']).toBe('no-store');
    expect(got.body).toEqual({
      account_id: owner.id,
      tier: 'business',
      job_results_days: null,
      chunks_days: null,
      watch_history_days: null,
      caps: { ...RETENTION_CAPS.business },
      updated_at: null,
      request_id: expect.any(String),
    });
  });

  it('sets and resets fields, leaves the others, and records every change with who and from where', async () => {
    const owner = await h.newOwner();
    const keyAdmin = await keyWith(owner.key, ['keys:admin']);
    const set = await call(keyAdmin, 'PATCH', '/api/v1/account/retention', {
      job_results_days: 3,
      watch_history_days: 30,
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toMatchObject({
      job_results_days: 3,
      chunks_days: null,
      watch_history_days: 30,
      updated_at: new Date(h.replicas.clock.now()).toISOString(),
    });
    const reset = await call(keyAdmin, 'PATCH', '/api/v1/account/retention', { job_results_days: null });
    expect(reset.body).toMatchObject({ job_results_days: null, watch_history_days: 30 });
    expect((await call(owner.key, 'GET', '/api/v1/account/retention')).body).toMatchObject({
      job_results_days: null,
      chunks_days: null,
      watch_history_days: 30,
    });

    const changes = (await auditOf(owner.key)).filter((e) => e.action === 'retention.changed');
    expect(changes).toHaveLength(2);
    const keyId = (await call(owner.key, 'GET', '/api/v1/keys')).body.keys.find(
      (k: { name: string }) => k.name === 'keys:admin',
    ).id;
    // Newest first: the reset, then the first change.
    expect(changes[1]).toMatchObject({
      actor: { type: 'key', id: keyId },
      target: { type: 'account', id: owner.id },
      source_ip: ADDRESS,
      details: {
        fields: ['job_results_days', 'watch_history_days'],
        job_results_days: 3,
        previous_job_results_days: null,
        watch_history_days: 30,
        previous_watch_history_days: null,
      },
    });
    expect(changes[0]).toMatchObject({
      details: { fields: ['job_results_days'], job_results_days: null, previous_job_results_days: 3 },
    });
  });

  it('refuses a value past the tier’s cap, naming the field and the cap, and changes nothing', async () => {
    const owner = await h.newOwner();
    const cap = RETENTION_CAPS.business.chunks_days;
    const over = await call(owner.key, 'PATCH', '/api/v1/account/retention', {
      job_results_days: 5,
      chunks_days: cap + 1,
    });
    expect(over.status).toBe(400);
    expect(over.body.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'chunks_days', max: cap });
    expect(over.body.error.message).toContain(`chunks_days`);
    expect(over.body.error.message).toContain(`${cap}`);
    for (const body of [{ job_results_days: 0 }, { watch_history_days: 1.5 }, {}, { keep: 3 }]) {
      const refused = await call(owner.key, 'PATCH', '/api/v1/account/retention', body);
      expect(refused.status, JSON.stringify(body)).toBe(400);
      expect(refused.body.error.code).toBe('INVALID_REQUEST');
    }
    expect((await call(owner.key, 'GET', '/api/v1/account/retention')).body.updated_at).toBeNull();
    expect((await auditOf(owner.key)).some((e) => e.action === 'retention.changed')).toBe(false);
  });

  it('reads with account:read, changes only with keys:admin', async () => {
    const owner = await h.newOwner();
    const reader = await keyWith(owner.key, ['account:read']);
    expect((await call(reader, 'GET', '/api/v1/account/retention')).status).toBe(200);
    const refused = await call(reader, 'PATCH', '/api/v1/account/retention', { chunks_days: 1 });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', required_scope: 'keys:admin' });
  });

  it('a job ending after a change keeps its results the account’s job_results_days', async () => {
    const owner = await h.newOwner();
    await call(owner.key, 'PATCH', '/api/v1/account/retention', { job_results_days: 2, chunks_days: 1 });
    const created = await call(owner.key, 'POST', '/api/v1/jobs', {
      source: { type: 'urls', urls: [VIDEO_URL] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    for (let i = 0; i < 50; i += 1) {
      await h.runner.pollOnce();
      await h.runner.idle();
      const job = await call(owner.key, 'GET', `/api/v1/jobs/${created.body.job_id as string}`);
      if (job.body.status !== 'completed') continue;
      expect(Date.parse(job.body.expires_at) - Date.parse(job.body.finished_at)).toBe(2 * DAY_MS);
      return;
    }
    throw new Error('the job did not finish');
  });
});

describe('/admin/v1/accounts/{id}/retention', () => {
  it('reads and changes as the public routes do, the dashboard user named in the audit log', async () => {
    const owner = await h.newOwner();
    const url = `/admin/v1/accounts/${owner.id}/retention`;
    const got = await adminCall('GET', url);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      account_id: owner.id,
      job_results_days: null,
      caps: RETENTION_CAPS.business,
    });
    expect(got.body).not.toHaveProperty('request_id');

    const changed = await adminCall('PATCH', `${url}?member_id=usr_7`, { watch_history_days: 7 });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body).toMatchObject({ watch_history_days: 7 });
    expect((await call(owner.key, 'GET', '/api/v1/account/retention')).body.watch_history_days).toBe(7);

    const byOperator = await adminCall('PATCH', url, { watch_history_days: null });
    expect(byOperator.body.watch_history_days).toBeNull();
    const actors = (await auditOf(owner.key))
      .filter((e) => e.action === 'retention.changed')
      .map((e) => e.actor);
    expect(actors).toEqual([
      { type: 'operator', id: null },
      { type: 'member', id: 'usr_7' },
    ]);

    const over = await adminCall('PATCH', url, { job_results_days: 1_000 });
    expect(over.status).toBe(400);
    expect(over.body.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'job_results_days', max: 90 });
    const unknown = '/admin/v1/accounts/acct_00000000000000000000000000000000/retention';
    expect((await adminCall('GET', unknown)).status).toBe(404);
    expect((await adminCall('PATCH', unknown, { chunks_days: 1 })).status).toBe(404);
  });
});
