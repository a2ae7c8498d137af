/**
 * scripts/backup.sh and scripts/restore.sh (docs/operations.md, "Backup" and "Restore") against
 * real engines: Redis and FerretDB (MongoDB wire protocol) from scripts/engines.sh with a private
 * ENGINES_DIR, since this file drops the database and flushes Redis. The real `npm start` runs on
 * them; state is made through the API, backed up, wiped, restored, and read back after a restart
 * with the same API_KEY_PEPPER (it derives the key hashes and the webhook secrets' encryption key).
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeYouTube, videoIds, type FakeYouTube } from '@subx/testing/fake-youtube';
import { waitFor } from '@subx/testing/wait';
import { engines, root, startSystem, timedFetch, type RunningSystem } from './faults/support.ts';

const ADMIN_TOKEN = 'fault-suite-admin-token-0123456789';
const API_KEY_PEPPER = 'backup-restore-test-pepper-0123456789abcdef';
const MONGO_DB = 'subx_backup_test';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

describe('backup and restore of the gateway and billing state', () => {
  const dir = mkdtempSync(join(tmpdir(), 'subx-backup-'));
  const backupDir = join(dir, 'backup');
  let mongoUrl = '';
  let redisUrl = '';
  let youtube: FakeYouTube;
  let system: RunningSystem | undefined;

  const start = async () =>
    (system = await startSystem({
      YOUTUBE_BASE_URL: youtube.url,
      MONGO_URL: mongoUrl,
      MONGO_DB,
      REDIS_URL: redisUrl,
      API_KEY_PEPPER,
    }));

  const script = (name: 'backup' | 'restore', ...args: string[]) =>
    spawnSync('bash', [`scripts/${name}.sh`, ...args], {
      cwd: root,
      env: { ...process.env, MONGO_URL: mongoUrl, MONGO_DB, REDIS_URL: redisUrl },
      encoding: 'utf8',
      timeout: 120_000,
    });

  const admin = async (method: string, path: string, body?: unknown) =>
    timedFetch(`${system!.adminUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  const api = (key: string, method: string, path: string, body?: unknown) =>
    timedFetch(`${system!.base}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  const mongo = async <T>(run: (client: MongoClient) => Promise<T>) => {
    const client = new MongoClient(mongoUrl);
    try {
      return await run(client);
    } finally {
      await client.close();
    }
  };

  const ledgerCount = () =>
    mongo(async (client) => {
      const counts: Record<string, number> = {};
      for (const { name } of await client.db(MONGO_DB).listCollections({}, { nameOnly: true }).toArray())
        counts[name] = await client.db(MONGO_DB).collection(name).countDocuments();
      return counts;
    });

  /** Billing's ledger entries, as stored. */
  const ledger = () =>
    mongo((client) =>
      client
        .db(MONGO_DB)
        .collection('usage_ledger')
        .find({}, { sort: { _id: 1 } })
        .toArray(),
    );

  /** The daily request counters in Redis (state the backup keeps), with their values. */
  const dailyCounters = async () => {
    const redis = new Redis(redisUrl);
    try {
      const keys = await redis.keys('rl:day:*');
      return Object.fromEntries(await Promise.all(keys.map(async (key) => [key, await redis.get(key)])));
    } finally {
      redis.disconnect();
    }
  };

  beforeAll(async () => {
    const env = engines(dir, 'up', 'redis', 'mongo');
    mongoUrl = /MONGO_URL=(\S+)/.exec(env)?.[1]?.replace(/^['"]|['"]$/g, '') ?? '';
    redisUrl = /REDIS_URL=(\S+)/.exec(env)?.[1]?.replace(/^['"]|['"]$/g, '') ?? '';
    expect(mongoUrl).toMatch(/^mongodb:/);
    expect(redisUrl).toMatch(/^redis:/);
    youtube = await startFakeYouTube();
  }, 240_000);

  afterAll(async () => {
    await system?.stop();
    await youtube?.close();
    try {
      engines(dir, 'down');
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(`${dir}.lock`, { force: true });
    }
  }, 120_000);

  it('restores accounts, keys, balances, jobs, webhook secrets and the ledger after the databases are dropped', async () => {
    await start();
    type Account = { id: string; key: string; initial: number };
    const accounts: Account[] = [];
    for (const initial of [500, 80]) {
      const created = await admin('POST', '/admin/v1/accounts', { tier: 'pro', credits: initial });
      expect(created.status).toBe(201);
      accounts.push({ id: String(created.body.account_id), key: String(created.body.api_key), initial });
    }
    const [first, second] = accounts as [Account, Account];

    // An extract (free by default) and a batch (one credit per video extracted) on the first account.
    const extract = await api(first.key, 'POST', '/api/v1/extract', {
      url: `https://www.youtube.com/watch?v=${videoIds.manualAndAuto}`,
    });
    expect(extract.status, JSON.stringify(extract.body)).toBe(200);
    const batch = await api(first.key, 'POST', '/api/v1/batch', {
      urls: [videoIds.manualAndAuto, videoIds.germanNamedTrack].map((id) => `https://youtu.be/${id}`),
    });
    expect(batch.status, JSON.stringify(batch.body)).toBe(200);
    const charged = batch.body.credits_charged as number;
    expect(charged).toBeGreaterThan(0);

    const urls = [videoIds.autoOnly, videoIds.manyManual].map((id) => `https://youtu.be/${id}`);
    const created = await api(second.key, 'POST', '/api/v1/jobs', { source: { type: 'urls', urls } });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const jobId = String(created.body.job_id);
    let job: Json = {};
    await waitFor(
      async () => {
        job = (await api(second.key, 'GET', `/api/v1/jobs/${jobId}`)).body;
        return ['completed', 'failed', 'canceled'].includes(job.status);
      },
      { timeoutMs: 60_000, intervalMs: 200, message: `job ${jobId} to end` },
    );
    expect(job.status).toBe('completed');
    const results = (await api(second.key, 'GET', `/api/v1/jobs/${jobId}/results`)).body;
    expect(results.results).toHaveLength(2);

    const rotated = await api(first.key, 'POST', '/api/v1/webhooks/secret');
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);
    const secret = (await api(first.key, 'GET', '/api/v1/webhooks/secret')).body;
    expect(secret.secret).toBe(rotated.body.secret);

    const today = new Date().toISOString().slice(0, 10);
    const snapshot = async () => {
      const state: Json = {};
      for (const account of accounts) {
        const read = await admin('GET', `/admin/v1/accounts/${account.id}`);
        expect(read.status).toBe(200);
        let usage: Json = {};
        // Billing consumes the usage events asynchronously; the ledger settles once they are in.
        await waitFor(
          async () => {
            usage = (await admin('GET', `/admin/v1/accounts/${account.id}/usage?from=${today}&to=${today}`))
              .body;
            return usage.total_credits === account.initial - (read.body.credits as number);
          },
          { timeoutMs: 30_000, intervalMs: 250, message: `billing usage of ${account.id} to settle` },
        );
        // The ledger's credits; request counts are reported in batches, flushed at shutdown.
        const credits = (usage.days as Json[]).map((day) => ({
          date: day.date,
          credits: day.credits,
          operations: Object.fromEntries(
            Object.entries(day.operations as Json).map(([op, o]) => [op, o.credits]),
          ),
        }));
        state[account.id] = { balance: read.body.credits, total_credits: usage.total_credits, credits };
      }
      return state;
    };
    const before = await snapshot();
    expect(before[first.id].balance).toBe(500 - charged);
    expect(job.credits_charged).toBeGreaterThan(0);
    expect(before[second.id].balance).toBe(80 - (job.credits_charged as number));
    await system!.stop();
    system = undefined;
    // Counted once the system is down: request-usage reports are flushed on shutdown.
    const documentsBefore = await ledgerCount();
    const ledgerBefore = await ledger();
    const countersBefore = await dailyCounters();
    expect(Object.keys(countersBefore).length).toBeGreaterThan(0);
    expect(documentsBefore.usage_ledger).toBeGreaterThan(0);

    const backedUp = script('backup', backupDir);
    expect(backedUp.status, backedUp.stderr).toBe(0);
    expect(`${backedUp.stdout}${backedUp.stderr}`).not.toContain(mongoUrl);
    const manifest = JSON.parse(readFileSync(join(backupDir, 'manifest.json'), 'utf8')) as Json;
    expect(Object.fromEntries((manifest.collections as Json[]).map((c) => [c.collection, c.count]))).toEqual(
      documentsBefore,
    );
    // The webhook secret is saved as stored: sealed, never in clear text.
    expect(readFileSync(join(backupDir, 'mongo', MONGO_DB, 'webhook_secrets.ndjson'), 'utf8')).not.toContain(
      String(secret.secret),
    );

    await mongo((client) => client.db(MONGO_DB).dropDatabase());
    const redis = new Redis(redisUrl);
    await redis.flushall();
    redis.disconnect();
    expect(await ledgerCount()).toEqual({});

    const restored = script('restore', backupDir);
    expect(restored.status, restored.stderr).toBe(0);
    expect(await ledgerCount()).toEqual(documentsBefore);
    expect(await ledger()).toEqual(ledgerBefore);
    expect(await dailyCounters()).toEqual(countersBefore);

    await start();
    // The same keys authenticate: their hashes came back with the accounts.
    for (const account of accounts)
      expect((await api(account.key, 'GET', '/api/v1/webhooks/secret')).status).toBe(200);
    expect((await api('sxk_v1_' + 'x'.repeat(32), 'GET', '/api/v1/webhooks/secret')).status).toBe(401);
    expect(await snapshot()).toEqual(before);
    const jobAfter = (await api(second.key, 'GET', `/api/v1/jobs/${jobId}`)).body;
    expect(jobAfter.status).toBe('completed');
    expect(jobAfter.progress).toEqual(job.progress);
    const resultsAfter = (await api(second.key, 'GET', `/api/v1/jobs/${jobId}/results`)).body;
    expect(resultsAfter.results).toEqual(results.results);
    const secretAfter = (await api(first.key, 'GET', '/api/v1/webhooks/secret')).body;
    expect(secretAfter.secret).toBe(secret.secret);
  }, 300_000);

  it('refuses a tampered backup and a non-empty target without --force', async () => {
    const before = await ledgerCount();
    expect(Object.keys(before).length).toBeGreaterThan(0);

    const occupied = script('restore', backupDir);
    expect(occupied.status).toBe(1);
    expect(occupied.stderr).toContain('the target is not empty (--force replaces it)');

    const tampered = join(dir, 'tampered');
    cpSync(backupDir, tampered, { recursive: true });
    appendFileSync(join(tampered, 'mongo', MONGO_DB, 'accounts.ndjson'), '{"_id":"intruder"}\n');
    const refused = script('restore', tampered, '--force');
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('accounts.ndjson: sha256 does not match the manifest');
    expect(await ledgerCount()).toEqual(before);
  }, 120_000);
});
