/**
 * The job runner's rules through the real routes and runner (jobs-support.ts): retries of passing
 * failures, running out of credits, cancel mid-run, a runner that dies or stops, leases held
 * through long items, and the per-account cap.
 */
import { describe, expect, it } from 'vitest';
import { AppError } from '@subx/errors';
import { createDirectFanOut } from '@subx/fanout';
import type { FanOut } from '@subx/fanout';
import { KEYS, transcript } from './support.ts';
import { REAL, allResults, auth, createJob, getJob, jobsGateway, watch } from './jobs-support.ts';

describe('bulk job runner', () => {
  it('gives an item that failed for a passing reason another try; one that keeps failing ends failed', async () => {
    const h = await jobsGateway();
    const flaky = REAL[0]!;
    const broken = REAL[1]!;
    let flakyCalls = 0;
    h.backends.handlers.getTranscript = async (req) => {
      if (req.videoId === flaky && ++flakyCalls === 1) throw new AppError('UPSTREAM_TIMEOUT', 'slow');
      if (req.videoId === broken) throw new AppError('UPSTREAM_TIMEOUT', 'always slow');
      return transcript(req.videoId);
    };
    const id = (
      await createJob(h, { source: { type: 'urls', urls: [flaky, broken, REAL[2]!].map(watch) } })
    ).json().job_id;
    await h.drain();
    const job = await getJob(h, id);
    expect(job).toMatchObject({
      status: 'completed',
      progress: { succeeded: 2, failed: 1 },
      credits_charged: 2,
    });
    const calls = h.backends.calls.filter((c) => c.method === 'getTranscript');
    expect(calls.filter((c) => (c.request as { videoId: string }).videoId === broken)).toHaveLength(3);
    expect((await allResults(h, id, 10))[1]).toMatchObject({
      success: false,
      error_code: 'UPSTREAM_TIMEOUT',
    });
  });

  it('cancels a running job: finished items and those in flight are kept and charged, the rest dropped', async () => {
    const h = await jobsGateway({ env: { JOB_WINDOW_SIZE: '2' } });
    const ids = Array.from({ length: 6 }, (_, i) => `r${String(i).padStart(10, '0')}`);
    let jobId = '';
    const asked: string[] = [];
    let canceled: () => void = () => {};
    const cancelDone = new Promise<void>((resolve) => (canceled = resolve));
    h.backends.handlers.getTranscript = async (req) => {
      asked.push(req.videoId);
      // Cancel while items 2 and 3 are in flight (the pool holds two): both are kept.
      if (req.videoId === ids[2]) {
        for (let i = 0; i < 200 && !asked.includes(ids[3]!); i++) await new Promise((r) => setTimeout(r, 5));
        await h.app.inject({ method: 'DELETE', url: `/api/v1/jobs/${jobId}`, headers: auth(KEYS.pro) });
        canceled();
      }
      if (req.videoId === ids[3]) await cancelDone;
      return transcript(req.videoId);
    };
    jobId = (await createJob(h, { source: { type: 'urls', urls: ids.map(watch) } })).json().job_id;
    await h.drain();
    const job = await getJob(h, jobId);
    expect(job.status).toBe('canceled');
    expect(job.progress).toEqual({ total: 6, succeeded: 4, failed: 0, pending: 2 });
    expect(job.credits_charged).toBe(4);
    expect(h.ledger.balances.get('acc_pro')).toBe(96);
    // Nothing started after the cancel.
    expect(asked).toEqual(ids.slice(0, 4));
    expect(h.events.filter((e) => e.type === 'job.canceled')).toHaveLength(1);
    expect(h.webhooks).toHaveLength(0);
    expect((await allResults(h, jobId, 10)).map((r) => r.index)).toEqual([0, 1, 2, 3]);
  });

  it('stops at the credits: what finished is kept and charged, the job fails INSUFFICIENT_CREDITS', async () => {
    const h = await jobsGateway({ balances: { acc_pro: 2 } });
    const created = await createJob(h, { source: { type: 'urls', urls: REAL.map(watch) } });
    expect(created.statusCode).toBe(202);
    await h.drain();
    const job = await getJob(h, created.json().job_id);
    expect(job).toMatchObject({
      status: 'failed',
      error: { code: 'INSUFFICIENT_CREDITS' },
      credits_charged: 2,
    });
    expect(job.progress.succeeded).toBe(2);
    expect(h.ledger.balances.get('acc_pro')).toBe(0);
    const broke = await createJob(h, { source: { type: 'urls', urls: [watch(REAL[0]!)] } });
    expect(broke.statusCode).toBe(402);
  });

  it('resumes a job whose runner died, never running or charging an item twice', async () => {
    const h = await jobsGateway({ env: { JOB_WINDOW_SIZE: '2', JOB_LEASE_MS: '5000' } });
    const ids = Array.from({ length: 6 }, (_, i) => `c${String(i).padStart(10, '0')}`);
    // Runner A gets through the first two items (its progress saved: JOB_WINDOW_SIZE items), then
    // hangs on the next ones (a gateway that froze).
    const hang = new Promise<never>(() => {});
    let calls = 0;
    const dying: FanOut = {
      async run(request) {
        calls += 1;
        if (calls <= 2)
          return createDirectFanOut({ extractor: h.backends.extractor, concurrency: 4 }).run(request);
        return hang;
      },
    };
    const jobId = (await createJob(h, { source: { type: 'urls', urls: ids.map(watch) } })).json().job_id;
    const a = h.newRunner('runner-dies', dying);
    await a.pollOnce();
    for (let i = 0; i < 50 && (await h.store.byId(jobId))?.next_index !== 2; i++)
      await new Promise((r) => setTimeout(r, 5));
    expect((await h.store.byId(jobId))?.next_index).toBe(2);
    // Its lease runs out; another gateway takes the job over where it was.
    h.clock.advance(6_000);
    await h.drain();
    const job = await getJob(h, jobId);
    expect(job).toMatchObject({
      status: 'completed',
      progress: { succeeded: 6, failed: 0 },
      credits_charged: 6,
    });
    // Charged exactly once per item; the frozen runner's hold on its items in flight (none of them
    // recorded) was settled for nothing by the runner that took over.
    expect(h.ledger.events.reduce((sum, e) => sum + e.credits, 0)).toBe(6);
    expect(h.ledger.reservations.filter((r) => r.state === 'reserved')).toEqual([]);
    const transcriptCalls = h.backends.calls
      .filter((c) => c.method === 'getTranscript')
      .map((c) => (c.request as { videoId: string }).videoId);
    expect(transcriptCalls.sort()).toEqual([...ids].sort());
    expect(h.events.filter((e) => e.type === 'job.started')).toHaveLength(1);
    void a.stop(10);
  });

  it('charges what a runner that died recorded but never committed, once', async () => {
    const h = await jobsGateway({ env: { JOB_WINDOW_SIZE: '3', JOB_LEASE_MS: '5000' } });
    const ids = Array.from({ length: 3 }, (_, i) => `d${String(i).padStart(10, '0')}`);
    // Runner A starts the three items as one refill (one reservation); two finish and are recorded,
    // the third never answers, so the refill is never committed: A dies holding it.
    const direct = createDirectFanOut({ extractor: h.backends.extractor, concurrency: 4 });
    const dying: FanOut = {
      run: (request) =>
        request.jobs[0]!.videoId === ids[2] ? new Promise<never>(() => {}) : direct.run(request),
    };
    const jobId = (await createJob(h, { source: { type: 'urls', urls: ids.map(watch) } })).json().job_id;
    const a = h.newRunner('runner-dies-holding', dying);
    await a.pollOnce();
    for (let i = 0; i < 100 && !((await h.store.result(jobId, 0)) && (await h.store.result(jobId, 1))); i++)
      await new Promise((r) => setTimeout(r, 5));
    expect(await h.store.result(jobId, 1)).toMatchObject({ success: true, credits: 1 });
    expect(h.ledger.events).toEqual([]);
    expect(Object.keys((await h.store.byId(jobId))?.open_reservations ?? {})).toHaveLength(1);
    const before = h.ledger.balances.get('acc_pro');

    h.clock.advance(6_000);
    await h.drain();
    expect(await getJob(h, jobId)).toMatchObject({
      status: 'completed',
      progress: { succeeded: 3, failed: 0 },
      credits_charged: 3,
    });
    // The two A recorded, charged by the runner that took over (A's reservation), the third by its own.
    expect(h.ledger.events.map((e) => e.credits).sort()).toEqual([1, 2]);
    expect(h.ledger.balances.get('acc_pro')).toBe(before! + 3 - 3);
    expect(h.ledger.reservations.filter((r) => r.state === 'reserved')).toEqual([]);
    expect((await h.store.byId(jobId))?.open_reservations ?? {}).toEqual({});
    void a.stop(10);
  });

  it('keeps its lease through items slower than JOB_LEASE_MS: the job is not taken over and run twice', async () => {
    // Items in flight may take JOB_ROUND_TIMEOUT_MS (2 min by default), far past a lease renewed
    // only when the pool is refilled (30 s): the runner's own next poll would find the lease lapsed
    // and start the job a second time beside the first, running its items twice and counting only
    // one run's share of their charges in credits_charged.
    const h = await jobsGateway({ env: { JOB_WINDOW_SIZE: '2', JOB_LEASE_MS: '600' } });
    const ids = Array.from({ length: 4 }, (_, i) => `k${String(i).padStart(10, '0')}`);
    const direct = createDirectFanOut({ extractor: h.backends.extractor, concurrency: 4 });
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    const slow: FanOut = {
      async run(request) {
        calls += 1;
        await gate;
        return direct.run(request);
      },
    };
    const jobId = (await createJob(h, { source: { type: 'urls', urls: ids.map(watch) } })).json().job_id;
    const runner = h.newRunner('runner-slow', slow);
    await runner.pollOnce();
    for (let i = 0; i < 100 && calls < 2; i++) await new Promise((r) => setTimeout(r, 5));
    // The pool's two items (JOB_WINDOW_SIZE) are at the fan-out, each on its own.
    expect(calls).toBe(2);
    // They are still in flight when the lease they started with has run out.
    h.clock.advance(500);
    await new Promise((r) => setTimeout(r, 400));
    h.clock.advance(400);
    await runner.pollOnce();
    await new Promise((r) => setTimeout(r, 50));
    expect(runner.running()).toBe(1);
    expect(calls).toBe(2);
    release();
    await runner.idle();
    const job = await getJob(h, jobId);
    expect(job).toMatchObject({ status: 'completed', progress: { succeeded: 4 }, credits_charged: 4 });
    expect(h.ledger.events.reduce((sum, e) => sum + e.credits, 0)).toBe(4);
    const transcriptCalls = h.backends.calls.filter((c) => c.method === 'getTranscript');
    expect(transcriptCalls).toHaveLength(4);
    await runner.stop(1_000);
  });

  it('a runner stopped mid-job saves what it finished and gives the job back: another completes it', async () => {
    const h = await jobsGateway({ env: { JOB_WINDOW_SIZE: '2', JOB_LEASE_MS: '60000' } });
    const ids = Array.from({ length: 4 }, (_, i) => `s${String(i).padStart(10, '0')}`);
    const direct = createDirectFanOut({ extractor: h.backends.extractor, concurrency: 4 });
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    const held: FanOut = {
      async run(request) {
        calls += 1;
        await gate;
        return direct.run(request);
      },
    };
    const jobId = (await createJob(h, { source: { type: 'urls', urls: ids.map(watch) } })).json().job_id;
    const a = h.newRunner('runner-stopping', held);
    await a.pollOnce();
    for (let i = 0; i < 100 && calls < 2; i++) await new Promise((r) => setTimeout(r, 5));
    expect(calls).toBe(2);
    // Stopping while two items are in flight: they finish, nothing new starts.
    const stopped = a.stop(5_000);
    release();
    await stopped;
    expect(calls).toBe(2);
    // Handed back at once (no lease left to run out) with its two results saved.
    expect(await h.store.byId(jobId)).toMatchObject({ lease_owner: null, lease_until: 0, next_index: 2 });

    const b = h.newRunner('runner-resumes');
    await b.pollOnce();
    await b.idle();
    expect(await getJob(h, jobId)).toMatchObject({
      status: 'completed',
      progress: { succeeded: 4 },
      credits_charged: 4,
    });
    expect(h.backends.calls.filter((c) => c.method === 'getTranscript')).toHaveLength(4);
    expect(h.ledger.events.reduce((sum, e) => sum + e.credits, 0)).toBe(4);
    await b.stop(1_000);
  });

  it('runs at most JOBS_MAX_RUNNING_PER_ACCOUNT jobs of one account at once; others wait queued', async () => {
    const h = await jobsGateway({ env: { JOBS_MAX_RUNNING_PER_ACCOUNT: '2' } });
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    h.backends.handlers.getTranscript = async (req) => {
      await gate;
      return transcript(req.videoId);
    };
    const ids = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await createJob(h, { source: { type: 'urls', urls: [watch(REAL[i]!)] } })).json().job_id);
      h.clock.advance(1);
    }
    const other = (
      await createJob(h, { source: { type: 'urls', urls: [watch(REAL[3]!)] } }, KEYS.enterprise)
    ).json().job_id;
    await h.runner.pollOnce();
    const statuses = await Promise.all([...ids, other].map(async (id) => (await h.store.byId(id))?.status));
    expect(statuses).toEqual(['running', 'running', 'queued', 'running']);
    release();
    await h.drain();
    for (const id of [...ids, other]) expect((await h.store.byId(id))?.status).toBe('completed');
  });
});
