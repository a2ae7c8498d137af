/**
 * End to end: "a job survives a job-service, gateway, extractor or broker restart and resumes where
 * it was, never charging an item twice". The gateway, the job service and the extractor run as
 * separate processes on a real Kafka and a real MongoDB-wire store (FerretDB), both started here by
 * scripts/engines.sh with a private ENGINES_DIR (this file stops the broker, and the state must
 * outlive it). Each
 * case runs a job of N videos on a fresh account, breaks something once part of it is done, and
 * then wants the same end state: completed, N succeeded, N credits charged, the balance down by
 * exactly N, every result paged exactly once.
 *
 * Small JOBS_* settings keep it short: a lease of 3 s (a killed job service's job is free again
 * soon), a pool of 5 items in flight, and each item's trip bounded by 15 s (items in flight on a
 * killed extractor end as a retryable TIMEOUT and run again). A killed job service strands the credit
 * reservations of the items it had in flight; the ledger releases reservations older than
 * CREDIT_RESERVATION_TTL_MS (20 s here, longer than an item's trip), which is when the balance
 * settles.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@subx/testing/wait';
import {
  engines,
  javaForKafka,
  listening,
  root,
  startSplitSystem,
  timedFetch,
  type SplitSystem,
} from './support.ts';

const N = 40;
const CREDITS = 1_000;

const java = javaForKafka();

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

describe.skipIf(!java)(
  'fault: a bulk job survives a job-service, gateway, extractor or broker restart',
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'subx-fault-jobs-'));
    let brokers = '';
    let system: SplitSystem;
    // Each case its own videos: the extractor's in-process cache would make a second job instant.
    // The first 10 are the start-up batch's.
    let nextVideo = 10;

    beforeAll(async () => {
      const env = engines(dir, 'up', 'kafka', 'mongo');
      brokers = /KAFKA_BROKERS=(\S+)/.exec(env)?.[1] ?? '';
      const mongoUrl = /MONGO_URL=(\S+)/.exec(env)?.[1]?.replace(/^['"]|['"]$/g, '') ?? '';
      expect(brokers).not.toBe('');
      expect(mongoUrl).toMatch(/^mongodb:/);
      system = await startSplitSystem({
        brokers,
        mongoUrl,
        videoCount: 10 + 5 * N,
        prefix: 'jobrv',
        latencyMs: 100,
        gatewayEnv: {
          JOBS_POLL_MS: '200',
          JOB_LEASE_MS: '3000',
          JOB_WINDOW_SIZE: '5',
          JOB_ITEM_TIMEOUT_MS: '10000',
          JOB_ROUND_TIMEOUT_MS: '15000',
          CREDIT_RESERVATION_TTL_MS: '20000',
          // The hold must outlive every request's deadline, the synchronous transcription's too.
          TRANSCRIBE_SYNC_DEADLINE_MS: '10000',
        },
      });
    }, 240_000);

    afterAll(async () => {
      await system?.stop();
      try {
        engines(dir, 'down');
      } finally {
        rmSync(dir, { recursive: true, force: true });
        rmSync(`${dir}.lock`, { force: true });
      }
    }, 120_000);

    async function credits(accountId: string): Promise<number> {
      const res = await system.admin('GET', `/admin/v1/accounts/${accountId}`);
      expect(res.status).toBe(200);
      return res.body.credits as number;
    }

    const api = (key: string, path: string, body?: unknown) =>
      timedFetch(`${system.base}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });

    /** A pro account with credits, and a job of N fresh videos on it, part of which is done. */
    async function jobUnderWay() {
      const account = await system.admin('POST', '/admin/v1/accounts', { tier: 'pro', credits: CREDITS });
      expect(account.status).toBe(201);
      const accountId = String(account.body.account_id);
      const key = String(account.body.api_key);
      const before = await credits(accountId);
      const urls = system.urls.slice(nextVideo, nextVideo + N);
      nextVideo += N;
      expect(urls).toHaveLength(N);
      const created = await api(key, '/api/v1/jobs', { source: { type: 'urls', urls } });
      expect(created.status, JSON.stringify(created.body)).toBe(202);
      const jobId = String(created.body.job_id);
      let job: Json = {};
      await waitFor(
        async () => {
          job = (await api(key, `/api/v1/jobs/${jobId}`)).body;
          return job.progress?.succeeded > 0;
        },
        { timeoutMs: 60_000, intervalMs: 100, message: `job ${jobId} under way` },
      );
      // Under way, not done: the fault lands in the middle of it.
      expect(job.status).toBe('running');
      expect(job.progress.succeeded).toBeLessThan(N);
      return { accountId, key, before, jobId };
    }

    /** The job ended once, as if nothing had happened; the account paid for each video once. */
    async function expectExactlyOnce(run: Awaited<ReturnType<typeof jobUnderWay>>) {
      let job: Json = {};
      await waitFor(
        async () => {
          const res = await api(run.key, `/api/v1/jobs/${run.jobId}`).catch(() => null);
          job = res?.body ?? {};
          return ['completed', 'failed', 'canceled'].includes(job.status);
        },
        { timeoutMs: 120_000, intervalMs: 250, message: `job ${run.jobId} to end` },
      ).catch((error: unknown) => {
        throw new Error(`${JSON.stringify(job)}\n${system.output().slice(-20_000)}`, { cause: error });
      });
      expect(job, system.output().slice(-20_000)).toMatchObject({
        status: 'completed',
        progress: { total: N, succeeded: N, failed: 0, pending: 0 },
        credits_charged: N,
      });
      // A killed service's reservations are held until the ledger's sweeper releases them (TTL 20 s).
      let balance = 0;
      await waitFor(async () => (balance = await credits(run.accountId)) === run.before - N, {
        timeoutMs: 45_000,
        intervalMs: 500,
        message: `the balance to settle at ${run.before - N}`,
      }).catch((error: unknown) => {
        throw new Error(`balance ${balance}, before ${run.before}, N ${N}`, { cause: error });
      });
      // Settled means settled: nothing comes back or goes later.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await credits(run.accountId)).toBe(run.before - N);

      const results: Json[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < 2 * N; page++) {
        const query: string = `limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const res = await api(run.key, `/api/v1/jobs/${run.jobId}/results?${query}`);
        expect(res.status).toBe(200);
        results.push(...(res.body.results as Json[]));
        cursor = res.body.next_cursor as string | null;
        if (cursor === null) break;
      }
      expect(cursor).toBeNull();
      expect(results.map((r) => r.index)).toEqual(Array.from({ length: N }, (_, i) => i));
      expect(results.every((r) => r.success === true)).toBe(true);
    }

    it('job service SIGKILLed mid-job and restarted: resumed from its progress, each item charged once', async () => {
      const run = await jobUnderWay();
      await system.killJobService();
      system.startJobService();
      await expectExactlyOnce(run);
    }, 180_000);

    it('gateway SIGKILLed mid-job and restarted: the job runs on, each item charged once', async () => {
      const run = await jobUnderWay();
      await system.killGateway();
      await system.startGateway();
      await expectExactlyOnce(run);
    }, 180_000);

    it('extractor and job service scaled in mid-job (SIGTERM) and back: each item run and charged once', async () => {
      const run = await jobUnderWay();
      // A scale-in stops a process gracefully: what it holds is finished or handed back.
      await system.stopExtractor();
      system.startExtractor();
      await system.stopJobService();
      system.startJobService();
      await expectExactlyOnce(run);
    }, 180_000);

    it('extractor SIGKILLed mid-job and restarted: the job completes, each item charged once', async () => {
      const run = await jobUnderWay();
      await system.killExtractor();
      system.startExtractor();
      await expectExactlyOnce(run);
    }, 180_000);

    it('broker restarted mid-job: the job waits, then completes, each item charged once', async () => {
      const run = await jobUnderWay();
      const port = Number(brokers.split(':').pop());
      const restart = spawn('bash', ['scripts/engines.sh', 'restart', 'kafka', '--pause', '10'], {
        cwd: root,
        env: { ...process.env, ENGINES_DIR: dir },
        stdio: 'ignore',
      });
      // engines.sh bounds the broker's start (KAFKA_TIMEOUT, 90 s); this bounds the script itself.
      const restarted = new Promise<number | null>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error('engines.sh restart kafka took over 120 s')),
          120_000,
        );
        restart.once('exit', (code) => (clearTimeout(timer), resolve(code)));
      });
      await waitFor(async () => !(await listening(port)), {
        timeoutMs: 30_000,
        intervalMs: 100,
        message: `kafka to stop listening on ${port}`,
      });
      // The broker went down while the job was still running.
      const during = (await api(run.key, `/api/v1/jobs/${run.jobId}`)).body;
      expect(during.status).toBe('running');
      expect(await restarted).toBe(0);
      await expectExactlyOnce(run);
    }, 180_000);
  },
);
