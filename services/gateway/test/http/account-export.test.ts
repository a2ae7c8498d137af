/**
 * The account's export end to end on the real access module (in-memory stores), the audit log and
 * the job service's jobs, watches and webhook secrets in process: the archive holds the account's
 * keys, secret metadata, watch, job and its results, usage and audit log between the `export`
 * header and the `end` count; never a key, a key's hash, the webhook secret or another account's
 * data; only the primary key may take it; it is recorded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY_SCOPES } from '@subx/contracts/access';
import { NAMED_KEYS_COLLECTION } from '../../src/access/named-keys.ts';
import { accountExportLines } from '../../src/export/account-export.ts';
import type { Replicas } from '../access/support.ts';
import type { TestGateway } from './support.ts';
import { accountsGateway } from './accounts-support.ts';
import type { AccountsHarness } from './accounts-support.ts';
import type { JobRunner } from '../../../jobs/src/jobs/runner.ts';

const VIDEOS = ['dQw4w9WgXcQ', 'jNQXAC9IVRw', '9bZkp7q19f0'];
const urlOf = (id: string) => `https://www.youtube.com/watch?v=${id}`;
const PLAYLIST = 'https://www.youtube.com/playlist?list=PLexported';

let h: AccountsHarness;
let replicas: Replicas;
let gw: TestGateway;
let runner: JobRunner;
/** Every API key this file has seen, of both accounts: none may appear in an export. */
const keysSeen: string[] = [];

interface Owner {
  id: string;
  key: string;
}

async function newOwner(): Promise<Owner> {
  const owner = await h.newOwner();
  keysSeen.push(owner.key);
  return owner;
}

beforeAll(async () => {
  h = await accountsGateway();
  ({ replicas, gw, runner } = h);
});
afterAll(async () => {
  await h?.stop();
});

async function call(key: string, method: 'GET' | 'POST', url: string, body?: unknown) {
  const response = await gw.app.inject({
    method,
    url,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    remoteAddress: '198.51.100.20',
  });
  return response;
}

async function makeKey(owner: Owner, body: Record<string, unknown>): Promise<string> {
  const made = await call(owner.key, 'POST', '/api/v1/keys', body);
  expect(made.statusCode, made.body).toBe(201);
  const key = made.json().api_key as string;
  keysSeen.push(key);
  return key;
}

/** Runs the queued jobs to their end (bounded). */
async function drain(): Promise<void> {
  for (let i = 0; i < 100; i += 1) {
    await runner.pollOnce();
    await runner.idle();
    const open = await replicas.store
      .collection('jobs')
      .countDocuments({ status: { $in: ['queued', 'running'] } });
    if (open === 0) return;
  }
  throw new Error('the jobs did not finish');
}

/** An account with a named key, a watch, a finished job of three videos and a rotated secret. */
async function populated(): Promise<Owner & { jobId: string; watchId: string; secrets: string[] }> {
  const owner = await newOwner();
  await makeKey(owner, { name: 'reader', scopes: ['transcripts:read'] });
  const created = await call(owner.key, 'POST', '/api/v1/jobs', {
    source: { type: 'urls', urls: VIDEOS.map(urlOf) },
  });
  expect(created.statusCode, created.body).toBe(202);
  const jobId = created.json().job_id as string;
  const watch = await call(owner.key, 'POST', '/api/v1/watches', {
    source: { type: 'playlist', url: PLAYLIST },
    interval_minutes: 60,
  });
  expect(watch.statusCode, watch.body).toBe(201);
  const first = await call(owner.key, 'GET', '/api/v1/webhooks/secret');
  const rotated = await call(owner.key, 'POST', '/api/v1/webhooks/secret');
  expect(rotated.statusCode, rotated.body).toBe(201);
  await drain();
  return {
    ...owner,
    jobId,
    watchId: watch.json().watch_id as string,
    secrets: [first.json().secret as string, rotated.json().secret as string],
  };
}

type Line = Record<string, unknown> & { type: string };

async function exportOf(key: string) {
  const response = await call(key, 'GET', '/api/v1/account/export');
  const text = response.body;
  const lines = response.statusCode === 200 ? text.split('\n').filter((l) => l !== '') : [];
  return { response, text, lines: lines.map((l) => JSON.parse(l) as Line) };
}

/** Every key hash stored, of every account (primary and named). */
async function storedHashes(): Promise<string[]> {
  const accounts = await replicas.store
    .collection<{ _id: string; key: { hash: string | null } }>('accounts')
    .find({});
  const named = await replicas.store
    .collection<{ _id: string; hash?: string }>(NAMED_KEYS_COLLECTION)
    .find({});
  return [...accounts.map((a) => a.key.hash), ...named.map((k) => k.hash)].filter(
    (h): h is string => typeof h === 'string' && h.length > 0,
  );
}

describe('GET /api/v1/account/export', () => {
  it('streams every piece of the account between the header and the end count, no secret in it', async () => {
    const other = await populated();
    const owner = await populated();
    const { response, text, lines } = await exportOf(owner.key);
    expect(response.statusCode, text).toBe(200);
    expect(response.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['content-disposition']).toBe(
      `attachment; filename="subx-export-${owner.id}-2026-03-15.jsonl"`,
    );

    expect(lines[0]).toEqual({
      type: 'export',
      format: 'subx-account-export/1',
      account_id: owner.id,
      exported_at: '2026-03-15T10:00:00.000Z',
    });
    expect(lines.at(-1)).toEqual({ type: 'end', lines: lines.length - 1 });
    expect(lines.filter((l) => l.type === 'end')).toHaveLength(1);
    const of = (type: string) => lines.filter((l) => l.type === type);
    expect(of('account')).toEqual([
      {
        type: 'account',
        id: owner.id,
        tier: 'business',
        credits_balance: expect.any(Number),
        created_at: expect.any(String),
        email: null,
      },
    ]);
    expect(of('key').map((k) => [k.name, k.primary])).toEqual([
      ['primary', true],
      ['reader', false],
    ]);
    expect(of('webhook_secret')).toEqual([
      {
        type: 'webhook_secret',
        exists: true,
        created_at: '2026-03-15T10:00:00.000Z',
        previous_secret_expires_at: '2026-03-16T10:00:00.000Z',
      },
    ]);
    expect(of('watch').map((w) => w.watch_id)).toEqual([owner.watchId]);
    expect(of('job')).toEqual([expect.objectContaining({ job_id: owner.jobId, status: 'completed' })]);
    const results = of('job_result');
    expect(results.map((r) => [r.job_id, r.video_id])).toEqual(VIDEOS.map((v) => [owner.jobId, v]));
    expect(of('usage_day')).toHaveLength(90);
    expect(of('usage_day').at(-1)).toMatchObject({ date: '2026-03-15' });
    const actions = of('audit_event').map((e) => e.action);
    expect(actions).toEqual(
      expect.arrayContaining(['key.created', 'watch.created', 'webhook_secret.rotated']),
    );

    for (const secret of [...keysSeen, ...(await storedHashes()), ...owner.secrets, ...other.secrets]) {
      expect(text.includes(secret), 'a key, hash or secret is in the export').toBe(false);
    }
    for (const foreign of [other.id, other.jobId, other.watchId]) {
      expect(text.includes(foreign), `${foreign} of another account is in the export`).toBe(false);
    }
  });

  it('is recorded in the audit log with the caller’s key and address', async () => {
    const owner = await newOwner();
    expect((await exportOf(owner.key)).response.statusCode).toBe(200);
    const audit = await call(owner.key, 'GET', '/api/v1/audit');
    const event = (audit.json().events as Line[]).find((e) => e.action === 'account.exported');
    expect(event).toMatchObject({
      actor: { type: 'key', id: expect.stringMatching(/^key_/) },
      target: { type: 'account', id: owner.id },
      source_ip: '198.51.100.20',
      details: { format: 'subx-account-export/1' },
    });
  });

  it('refuses a named key, even with every scope, and a key without keys:admin', async () => {
    const owner = await newOwner();
    const all = await makeKey(owner, { name: 'everything', scopes: [...API_KEY_SCOPES] });
    const refused = await exportOf(all);
    expect(refused.response.statusCode).toBe(403);
    expect(refused.response.json().error).toMatchObject({
      code: 'INSUFFICIENT_SCOPE',
      message: expect.stringContaining('primary key'),
      required_scope: 'keys:admin',
      primary_key_required: true,
    });
    const reader = await makeKey(owner, { name: 'reader', scopes: ['transcripts:read'] });
    const narrow = await exportOf(reader);
    expect(narrow.response.statusCode).toBe(403);
    expect(narrow.response.json().error).toMatchObject({
      code: 'INSUFFICIENT_SCOPE',
      required_scope: 'keys:admin',
    });
    const audit = await call(owner.key, 'GET', '/api/v1/audit');
    expect((audit.json().events as Line[]).map((e) => e.action)).not.toContain('account.exported');
  });
});

describe('the export’s lines', () => {
  const profile = {
    id: 'acct_0123456789abcdef0123456789abcdef',
    tier: 'pro',
    credits_balance: 5,
    created_at: '2026-01-01T00:00:00.000Z',
    email: 'owner@example.com',
  };

  it('a failure mid-stream ends the lines without the end line', async () => {
    let listed = 0;
    const lines: string[] = [];
    const failing = accountExportLines(
      {
        jobs: {
          list: async () => ({ jobs: [{ job_id: `job_${(listed += 1)}` }], next_cursor: 'more' }),
          results: async (_account, jobId) => {
            if (jobId === 'job_2') throw new Error('the job service went away');
            return { results: [{ index: 0 }], next_cursor: null };
          },
        },
      },
      profile,
      Date.UTC(2026, 2, 15),
    );
    await expect(
      (async () => {
        for await (const line of failing) lines.push(line);
      })(),
    ).rejects.toThrow('the job service went away');
    const types = lines.map((l) => (JSON.parse(l) as Line).type);
    expect(types).toEqual(['export', 'account', 'job', 'job_result', 'job']);
  });

  it('reads pages as they are taken: bounded pages, never the whole listing at once', async () => {
    const asked: number[] = [];
    let pages = 0;
    const lines = accountExportLines(
      {
        audit: {
          list: async (_account, options) => {
            asked.push(options?.limit ?? 0);
            pages += 1;
            return {
              events: [{ id: `aud_${pages}` } as never],
              next_cursor: pages < 5 ? `c${pages}` : null,
            };
          },
        },
      },
      profile,
      Date.UTC(2026, 2, 15),
    );
    // export, account, then the first event: one page read so far.
    for (let i = 0; i < 3; i += 1) await lines.next();
    expect(pages).toBe(1);
    const rest: string[] = [];
    for await (const line of lines) rest.push(line);
    expect(pages).toBe(5);
    expect(asked.every((limit) => limit > 0 && limit <= 200)).toBe(true);
    expect(JSON.parse(rest.at(-1)!)).toEqual({ type: 'end', lines: 7 });
  });
});
