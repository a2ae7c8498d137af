/**
 * The bulk jobs API through the real routes, store (in-memory document store), runner, notifier
 * and service, with the direct fan-out over fake backends. The system test
 * (test/system/jobs.test.ts) runs the same contract on `npm start` with Kafka workers and a real
 * webhook receiver.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AppError, Errors } from '@subx/errors';
import { createInMemoryDocumentStore } from '@subx/ports';
import type { extractorV1 } from '@subx/contracts';
import { DEFAULT_PRICING } from '../../src/access/pricing.ts';
import { createDirectFanOut } from '../../src/fanout/direct.ts';
import type { FanOut } from '../../src/fanout/types.ts';
import type { JobDoc } from '../../src/jobs/model.ts';
import { createJobNotifier } from '../../src/jobs/notify.ts';
import type { JobEventType, JobWebhookSink } from '../../src/jobs/notify.ts';
import { createJobRunner } from '../../src/jobs/runner.ts';
import type { JobRunner } from '../../src/jobs/runner.ts';
import { createJobsService } from '../../src/jobs/service.ts';
import { createJobSourceLister } from '../../src/jobs/sources.ts';
import { createJobStore } from '../../src/jobs/store.ts';
import type { JobStore } from '../../src/jobs/store.ts';
import { ManualClock } from '@subx/ports';
import { loadConfig } from '../../src/config.ts';
import {
  KEYS,
  START,
  buildTestGateway,
  createFakeBackends,
  createTestLedger,
  transcript,
} from './support.ts';
import type { FakeBackends, TestGateway } from './support.ts';

const REAL = ['dQw4w9WgXcQ', 'jNQXAC9IVRw', '9bZkp7q19f0', 'kJQP7kiw5Fk', 'F1xioXWb8CY'];
const UNKNOWN = ['aaaaaaaaaaa', 'bbbbbbbbbbb', 'ccccccccccc'];
const watch = (id: string) => `https://www.youtube.com/watch?v=${id}`;

interface JobsHarness {
  app: TestGateway['app'];
  backends: FakeBackends;
  ledger: ReturnType<typeof createTestLedger>;
  clock: ManualClock;
  store: JobStore;
  runner: JobRunner;
  events: { type: JobEventType; job: JobDoc }[];
  webhooks: Parameters<JobWebhookSink['enqueue']>[0][];
  /** Runs every runnable job to its end. */
  drain(): Promise<void>;
  newRunner(instanceId: string, fanOut?: FanOut): JobRunner;
}

const harnesses: JobsHarness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) {
    await h.runner.stop(1_000);
    await h.app.close();
  }
});

async function jobsGateway(
  options: { balances?: Record<string, number>; env?: Record<string, string> } = {},
): Promise<JobsHarness> {
  const env = { LOG_LEVEL: 'silent', JOB_WINDOW_SIZE: '3', JOBS_POLL_MS: '60000', ...options.env };
  const config = loadConfig(env);
  const backends = createFakeBackends();
  const ledger = createTestLedger(
    options.balances ?? { acc_free: 100, acc_pro: 100, acc_pro2: 100, acc_ent: 1000 },
  );
  const clock = new ManualClock(START);
  const documents = createInMemoryDocumentStore();
  const store = createJobStore(documents);
  await store.ensureIndexes();
  const events: JobsHarness['events'] = [];
  const webhooks: JobsHarness['webhooks'] = [];
  const notifier = createJobNotifier({
    store,
    events: { publish: async (type, job) => void events.push({ type, job }) },
    webhooks: { enqueue: async (input) => void webhooks.push(input) },
    logger: { warn: () => {} },
  });
  const silent = { info: () => {}, warn: () => {}, error: () => {} };
  const newRunner = (instanceId: string, fanOut?: FanOut) =>
    createJobRunner({
      store,
      fanOut: fanOut ?? createDirectFanOut({ extractor: backends.extractor, concurrency: 4 }),
      lister: createJobSourceLister({
        extractor: backends.extractor,
        timeoutMs: 5_000,
        sleep: async () => {},
      }),
      credits: ledger.ledger,
      pricing: DEFAULT_PRICING,
      notifier,
      clock,
      logger: silent,
      config,
      instanceId,
      sleep: async () => {},
    });
  const service = createJobsService({
    store,
    notifier,
    webhooks: null,
    credits: ledger.ledger,
    pricing: DEFAULT_PRICING,
    clock,
    resultsTtlMs: config.JOB_RESULTS_TTL,
  });
  const gw = await buildTestGateway({ env, deps: { jobs: service } });
  const runner = newRunner('runner-a');
  const harness: JobsHarness = {
    app: gw.app,
    backends,
    ledger,
    clock,
    store,
    runner,
    events,
    webhooks,
    newRunner,
    async drain() {
      for (let i = 0; i < 100; i++) {
        await runner.pollOnce();
        await runner.idle();
        const open = await documents
          .collection<JobDoc>('jobs')
          .countDocuments({ status: { $in: ['queued', 'running'] } });
        if (open === 0) return;
      }
      throw new Error('jobs did not finish');
    },
  };
  harnesses.push(harness);
  return harness;
}

const auth = (key: string) => ({ authorization: `Bearer ${key}` });

async function createJob(
  h: JobsHarness,
  body: Record<string, unknown>,
  key: string = KEYS.pro,
  headers = {},
) {
  return h.app.inject({
    method: 'POST',
    url: '/api/v1/jobs',
    headers: { ...auth(key), ...headers },
    payload: body,
  });
}

function unknownVideos(h: JobsHarness, unknown: readonly string[]) {
  h.backends.handlers.getTranscript = async (req) => {
    if (unknown.includes(req.videoId)) throw Errors.videoNotFound(req.videoId);
    return transcript(req.videoId);
  };
}

async function allResults(h: JobsHarness, jobId: string, limit: number, key: string = KEYS.pro) {
  const seen: Record<string, unknown>[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1_000; page++) {
    const response: {
      statusCode: number;
      json(): { results: Record<string, unknown>[]; next_cursor: string | null };
    } = await h.app.inject({
      method: 'GET',
      url: `/api/v1/jobs/${jobId}/results?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`,
      headers: auth(key),
    });
    expect(response.statusCode).toBe(200);
    const body: { results: Record<string, unknown>[]; next_cursor: string | null } = response.json();
    seen.push(...body.results);
    cursor = body.next_cursor;
    if (cursor === null) return seen;
  }
  throw new Error('results never ended');
}

describe('bulk jobs API', () => {
  it('runs 8 URLs (5 real, 3 unknown) to completed: 5 succeeded, 3 failed, 5 credits, one job.completed webhook', async () => {
    const h = await jobsGateway();
    unknownVideos(h, UNKNOWN);
    const created = await createJob(h, {
      source: { type: 'urls', urls: [...REAL, ...UNKNOWN].map(watch) },
      webhook_url: 'https://hooks.example.com/subx',
    });
    expect(created.statusCode).toBe(202);
    const job = created.json();
    expect(created.headers.location).toBe(`/api/v1/jobs/${job.job_id}`);
    expect(job).toMatchObject({
      status: 'queued',
      source: { type: 'urls', count: 8 },
      progress: { total: 8, succeeded: 0, failed: 0, pending: 8 },
      credits_charged: 0,
      webhook: { url: 'https://hooks.example.com/subx', status: 'waiting', attempts: [] },
    });
    // Counted as one request against the daily limit.
    expect(created.headers['x-ratelimit-remaining']).toBe(String(DEFAULT_PRICING.dailyLimit.pro! - 1));

    await h.drain();
    const done = (
      await h.app.inject({ method: 'GET', url: `/api/v1/jobs/${job.job_id}`, headers: auth(KEYS.pro) })
    ).json();
    expect(done).toMatchObject({
      status: 'completed',
      progress: { total: 8, succeeded: 5, failed: 3, pending: 0 },
      credits_charged: 5,
    });
    expect(done.finished_at).not.toBeNull();
    expect(h.ledger.balances.get('acc_pro')).toBe(95);
    expect(h.events.map((e) => e.type)).toEqual(['job.created', 'job.started', 'job.completed']);
    expect(h.webhooks).toHaveLength(1);
    expect(h.webhooks[0]).toMatchObject({
      accountId: 'acc_pro',
      url: 'https://hooks.example.com/subx',
      subject: job.job_id,
      event: 'job.completed',
      data: { job_id: job.job_id, status: 'completed', progress: { succeeded: 5, failed: 3 } },
    });

    const results = await allResults(h, job.job_id, 3);
    expect(results.map((r) => r.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(results.filter((r) => r.success).map((r) => r.video_id)).toEqual(REAL);
    expect(results.slice(5).map((r) => r.error_code)).toEqual([
      'VIDEO_NOT_FOUND',
      'VIDEO_NOT_FOUND',
      'VIDEO_NOT_FOUND',
    ]);
  });

  it('gives an item that failed for a passing reason another round; one that keeps failing ends failed', async () => {
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
    const job = (
      await h.app.inject({ method: 'GET', url: `/api/v1/jobs/${id}`, headers: auth(KEYS.pro) })
    ).json();
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

  it('refuses the free tier (the tier error of summarize) and too many items for the tier', async () => {
    const h = await jobsGateway();
    const free = await createJob(h, { source: { type: 'urls', urls: [watch(REAL[0]!)] } }, KEYS.free);
    expect(free.statusCode).toBe(403);
    expect(free.json().error.code).toBe('TIER_REQUIRED');
    const many = Array.from(
      { length: 1_001 },
      (_, i) => `${watch(`v${String(i).padStart(10, '0')}`)}&feature=youtu.be&si=abcdefgh`,
    );
    const tooMany = await createJob(h, { source: { type: 'urls', urls: many } });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().error.message).toContain('up to 1000 items per job');
    // The enterprise tier takes it, and the body (over 64 KB) is accepted on this route.
    const enterprise = await createJob(h, { source: { type: 'urls', urls: many } }, KEYS.enterprise);
    expect(JSON.stringify({ urls: many }).length).toBeGreaterThan(65_536);
    expect(enterprise.statusCode).toBe(202);
    const badChannel = await createJob(h, {
      source: { type: 'channel', url: 'https://www.youtube.com/watch?v=x' },
    });
    expect(badChannel.json().error.code).toBe('INVALID_URL');
    const badSource = await createJob(h, { source: { type: 'feed', url: 'https://example.com' } });
    expect(badSource.statusCode).toBe(400);
  });

  it('takes a whole playlist past 25 videos; its paginated results hold every item exactly once', async () => {
    const h = await jobsGateway({ env: { JOB_WINDOW_SIZE: '7' } });
    const ids = Array.from({ length: 60 }, (_, i) => `p${String(i).padStart(10, '0')}`);
    h.backends.handlers.listPlaylistVideos = async (req) =>
      ({
        playlistId: req.playlistId,
        title: 'Sixty',
        uploader: 'someone',
        totalVideos: 60,
        videoIds: ids.slice(0, req.maxVideos),
        hasMore: false,
        cached: false,
      }) satisfies extractorV1.ListPlaylistVideosResponse;
    const created = await createJob(h, {
      source: { type: 'playlist', url: 'https://www.youtube.com/playlist?list=PLabcdefghijklmnop', max: 100 },
    });
    expect(created.statusCode).toBe(202);
    expect(created.json().progress.total).toBeNull();
    await h.drain();
    const job = (
      await h.app.inject({
        method: 'GET',
        url: `/api/v1/jobs/${created.json().job_id}`,
        headers: auth(KEYS.pro),
      })
    ).json();
    expect(job).toMatchObject({
      status: 'completed',
      progress: { total: 60, succeeded: 60 },
      credits_charged: 60,
    });
    expect(job.source).toMatchObject({ type: 'playlist', title: 'Sixty', max: 100 });
    const results = await allResults(h, job.job_id, 17);
    expect(results.map((r) => r.video_id)).toEqual(ids);
    expect(new Set(results.map((r) => r.index)).size).toBe(60);
  });

  it('lists a channel tab for a channel job', async () => {
    const h = await jobsGateway();
    h.backends.handlers.listChannelVideos = async (req) =>
      ({
        channelId: 'UCabcdefghijklmnopqrstuv',
        title: 'A channel',
        handle: 'achannel',
        tab: req.tab,
        videos: REAL.map((videoId) => ({ videoId, title: videoId, isLive: false, isUpcoming: false })),
        hasMore: true,
        cached: false,
      }) satisfies extractorV1.ListChannelVideosResponse;
    const created = await createJob(h, {
      source: { type: 'channel', url: 'https://www.youtube.com/@achannel/shorts', max: 4 },
    });
    expect(created.json().source).toEqual({
      type: 'channel',
      url: 'https://www.youtube.com/@achannel/shorts',
      tab: 'shorts',
      max: 4,
    });
    await h.drain();
    const listCall = h.backends.calls.find((c) => c.method === 'listChannelVideos');
    expect(listCall?.request).toMatchObject({ maxVideos: 4, tab: 2 });
    const job = (
      await h.app.inject({
        method: 'GET',
        url: `/api/v1/jobs/${created.json().job_id}`,
        headers: auth(KEYS.pro),
      })
    ).json();
    expect(job).toMatchObject({
      status: 'completed',
      progress: { total: 4, succeeded: 4 },
      source: { title: 'A channel' },
    });
  });

  it('fails a job whose channel cannot be listed, with the listing error', async () => {
    const h = await jobsGateway();
    h.backends.handlers.listChannelVideos = async () => {
      throw Errors.channelNotFound('@gone', 'no such channel', 'not_found');
    };
    const created = await createJob(h, { source: { type: 'channel', url: 'https://www.youtube.com/@gone' } });
    await h.drain();
    const job = (
      await h.app.inject({
        method: 'GET',
        url: `/api/v1/jobs/${created.json().job_id}`,
        headers: auth(KEYS.pro),
      })
    ).json();
    expect(job.status).toBe('failed');
    expect(job.error.code).toBe('CHANNEL_NOT_FOUND');
    expect(h.events.at(-1)?.type).toBe('job.failed');
  });

  it('keeps jobs to their account: another key gets 404 everywhere', async () => {
    const h = await jobsGateway();
    const id = (await createJob(h, { source: { type: 'urls', urls: [watch(REAL[0]!)] } })).json().job_id;
    for (const [method, url] of [
      ['GET', `/api/v1/jobs/${id}`],
      ['GET', `/api/v1/jobs/${id}/results`],
      ['GET', `/api/v1/jobs/${id}/results/0`],
      ['DELETE', `/api/v1/jobs/${id}`],
    ] as const) {
      const response = await h.app.inject({ method, url, headers: auth(KEYS.pro2) });
      expect(response.statusCode, `${method} ${url}`).toBe(404);
      expect(response.json().error.code).toBe('JOB_NOT_FOUND');
    }
    const list = await h.app.inject({ method: 'GET', url: '/api/v1/jobs', headers: auth(KEYS.pro2) });
    expect(list.json()).toEqual({ jobs: [], next_cursor: null });
    const unauthenticated = await h.app.inject({ method: 'GET', url: `/api/v1/jobs/${id}` });
    expect(unauthenticated.statusCode).toBe(401);
    const malformed = await h.app.inject({
      method: 'GET',
      url: '/api/v1/jobs/not-a-job',
      headers: auth(KEYS.pro),
    });
    expect(malformed.statusCode).toBe(400);
  });

  it('lists the account’s jobs newest first, in pages', async () => {
    const h = await jobsGateway();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await createJob(h, { source: { type: 'urls', urls: [watch(REAL[i]!)] } })).json().job_id);
      h.clock.advance(1_000);
    }
    const first = (
      await h.app.inject({ method: 'GET', url: '/api/v1/jobs?limit=2', headers: auth(KEYS.pro) })
    ).json();
    expect(first.jobs.map((j: { job_id: string }) => j.job_id)).toEqual([ids[4], ids[3]]);
    const rest = (
      await h.app.inject({
        method: 'GET',
        url: `/api/v1/jobs?limit=10&cursor=${first.next_cursor}`,
        headers: auth(KEYS.pro),
      })
    ).json();
    expect(rest.jobs.map((j: { job_id: string }) => j.job_id)).toEqual([ids[2], ids[1], ids[0]]);
    expect(rest.next_cursor).toBeNull();
    const bad = await h.app.inject({
      method: 'GET',
      url: '/api/v1/jobs?cursor=nonsense',
      headers: auth(KEYS.pro),
    });
    expect(bad.statusCode).toBe(400);
  });

  it('cancels: a queued job at once, again is the same answer, a completed one is 409', async () => {
    const h = await jobsGateway();
    const id = (await createJob(h, { source: { type: 'urls', urls: [watch(REAL[0]!)] } })).json().job_id;
    const canceled = await h.app.inject({
      method: 'DELETE',
      url: `/api/v1/jobs/${id}`,
      headers: auth(KEYS.pro),
    });
    expect(canceled.statusCode).toBe(200);
    expect(canceled.json()).toMatchObject({ status: 'canceled', progress: { pending: 1 } });
    expect(
      (await h.app.inject({ method: 'DELETE', url: `/api/v1/jobs/${id}`, headers: auth(KEYS.pro) })).json()
        .status,
    ).toBe('canceled');
    expect(h.events.map((e) => e.type)).toEqual(['job.created', 'job.canceled']);
    await h.drain();
    expect(h.backends.calls.filter((c) => c.method === 'getTranscript')).toHaveLength(0);

    const other = (await createJob(h, { source: { type: 'urls', urls: [watch(REAL[1]!)] } })).json().job_id;
    await h.drain();
    const finished = await h.app.inject({
      method: 'DELETE',
      url: `/api/v1/jobs/${other}`,
      headers: auth(KEYS.pro),
    });
    expect(finished.statusCode).toBe(409);
    expect(finished.json().error.code).toBe('JOB_FINISHED');
  });

  it('cancels a running job: finished items are kept and charged, the rest dropped', async () => {
    const h = await jobsGateway({ env: { JOB_WINDOW_SIZE: '2' } });
    const ids = Array.from({ length: 6 }, (_, i) => `r${String(i).padStart(10, '0')}`);
    let jobId = '';
    h.backends.handlers.getTranscript = async (req) => {
      // Cancel while the second window is in flight.
      if (req.videoId === ids[2]) {
        await h.app.inject({ method: 'DELETE', url: `/api/v1/jobs/${jobId}`, headers: auth(KEYS.pro) });
      }
      return transcript(req.videoId);
    };
    jobId = (await createJob(h, { source: { type: 'urls', urls: ids.map(watch) } })).json().job_id;
    await h.drain();
    const job = (
      await h.app.inject({ method: 'GET', url: `/api/v1/jobs/${jobId}`, headers: auth(KEYS.pro) })
    ).json();
    expect(job.status).toBe('canceled');
    expect(job.progress).toEqual({ total: 6, succeeded: 4, failed: 0, pending: 2 });
    expect(job.credits_charged).toBe(4);
    expect(h.ledger.balances.get('acc_pro')).toBe(96);
    expect(h.events.filter((e) => e.type === 'job.canceled')).toHaveLength(1);
    expect(h.webhooks).toHaveLength(0);
    expect((await allResults(h, jobId, 10)).map((r) => r.index)).toEqual([0, 1, 2, 3]);
  });

  it('stops at the credits: what finished is kept and charged, the job fails INSUFFICIENT_CREDITS', async () => {
    const h = await jobsGateway({ balances: { acc_pro: 2 } });
    const created = await createJob(h, { source: { type: 'urls', urls: REAL.map(watch) } });
    expect(created.statusCode).toBe(202);
    await h.drain();
    const job = (
      await h.app.inject({
        method: 'GET',
        url: `/api/v1/jobs/${created.json().job_id}`,
        headers: auth(KEYS.pro),
      })
    ).json();
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
    // Runner A gets through the first window, then hangs on the second (a gateway that froze).
    const hang = new Promise<never>(() => {});
    let calls = 0;
    const dying: FanOut = {
      async run(request) {
        calls += 1;
        if (calls === 1)
          return createDirectFanOut({ extractor: h.backends.extractor, concurrency: 4 }).run(request);
        // Half the window finishes before the freeze.
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
    const job = (
      await h.app.inject({ method: 'GET', url: `/api/v1/jobs/${jobId}`, headers: auth(KEYS.pro) })
    ).json();
    expect(job).toMatchObject({
      status: 'completed',
      progress: { succeeded: 6, failed: 0 },
      credits_charged: 6,
    });
    // Charged exactly once per item (the frozen runner's hold on its window is released by the
    // real ledger's sweeper after the reservation TTL; this test ledger keeps it).
    expect(h.ledger.events.reduce((sum, e) => sum + e.credits, 0)).toBe(6);
    const transcriptCalls = h.backends.calls
      .filter((c) => c.method === 'getTranscript')
      .map((c) => (c.request as { videoId: string }).videoId);
    expect(transcriptCalls.sort()).toEqual([...ids].sort());
    expect(h.events.filter((e) => e.type === 'job.started')).toHaveLength(1);
    void a.stop(10);
  });

  it('keeps its lease through a round longer than JOB_LEASE_MS: the job is not taken over and run twice', async () => {
    // A round waits as long as its slowest item (JOB_ROUND_TIMEOUT_MS, 2 min by default), far past
    // a lease renewed only between rounds (30 s): the runner's own next poll found the lease lapsed
    // and started the job a second time beside the first, running the window twice and counting
    // only one run's share of its charges in credits_charged.
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
    for (let i = 0; i < 100 && calls === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(calls).toBe(1);
    // The round is still in flight when the lease it started with has run out.
    h.clock.advance(500);
    await new Promise((r) => setTimeout(r, 400));
    h.clock.advance(400);
    await runner.pollOnce();
    await new Promise((r) => setTimeout(r, 50));
    expect(runner.running()).toBe(1);
    expect(calls).toBe(1);
    release();
    await runner.idle();
    const job = (
      await h.app.inject({ method: 'GET', url: `/api/v1/jobs/${jobId}`, headers: auth(KEYS.pro) })
    ).json();
    expect(job).toMatchObject({ status: 'completed', progress: { succeeded: 4 }, credits_charged: 4 });
    expect(h.ledger.events.reduce((sum, e) => sum + e.credits, 0)).toBe(4);
    const transcriptCalls = h.backends.calls.filter((c) => c.method === 'getTranscript');
    expect(transcriptCalls).toHaveLength(4);
    await runner.stop(1_000);
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

  it('serves one result as a download in the job format; results expire after JOB_RESULTS_TTL (410), the job stays', async () => {
    const h = await jobsGateway({ env: { JOB_RESULTS_TTL: '1h' } });
    unknownVideos(h, UNKNOWN);
    const id = (
      await createJob(h, {
        source: { type: 'urls', urls: [watch(REAL[0]!), watch(UNKNOWN[0]!)] },
        format: 'srt',
      })
    ).json().job_id;
    await h.drain();
    const srt = await h.app.inject({
      method: 'GET',
      url: `/api/v1/jobs/${id}/results/0`,
      headers: auth(KEYS.pro),
    });
    expect(srt.statusCode).toBe(200);
    expect(srt.headers['content-type']).toBe('text/srt; charset=utf-8');
    expect(srt.headers['content-disposition']).toBe(`attachment; filename="${REAL[0]}.srt"`);
    expect(srt.body).toMatch(/^1\r?\n00:00:00,000 --> /);
    const failed = await h.app.inject({
      method: 'GET',
      url: `/api/v1/jobs/${id}/results/1`,
      headers: auth(KEYS.pro),
    });
    expect(failed.statusCode).toBe(404);
    expect(failed.json().error.code).toBe('VIDEO_NOT_FOUND');
    const past = await h.app.inject({
      method: 'GET',
      url: `/api/v1/jobs/${id}/results/2`,
      headers: auth(KEYS.pro),
    });
    expect(past.json().error.code).toBe('NOT_FOUND');

    h.clock.advance(3_600_001);
    const gone = await h.app.inject({
      method: 'GET',
      url: `/api/v1/jobs/${id}/results`,
      headers: auth(KEYS.pro),
    });
    expect(gone.statusCode).toBe(410);
    expect(gone.json().error.code).toBe('JOB_EXPIRED');
    expect(
      (await h.app.inject({ method: 'GET', url: `/api/v1/jobs/${id}`, headers: auth(KEYS.pro) })).statusCode,
    ).toBe(200);
    // The sweeper removes the results, then (a TTL later) the job.
    expect(await h.store.purge(h.clock.now(), 10)).toBe(1);
    expect(await h.store.results(id, 0, 10)).toEqual([]);
    h.clock.advance(3_600_000);
    await h.store.purge(h.clock.now(), 10);
    expect(
      (await h.app.inject({ method: 'GET', url: `/api/v1/jobs/${id}`, headers: auth(KEYS.pro) })).statusCode,
    ).toBe(404);
  });

  it('replays a job creation with the same Idempotency-Key (one job, its Location again)', async () => {
    const h = await jobsGateway();
    const body = { source: { type: 'urls', urls: [watch(REAL[0]!)] } };
    const first = await createJob(h, body, KEYS.pro, { 'idempotency-key': 'job-once-1' });
    const again = await createJob(h, body, KEYS.pro, { 'idempotency-key': 'job-once-1' });
    expect(again.statusCode).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().job_id).toBe(first.json().job_id);
    expect(again.headers.location).toBe(first.headers.location);
    const list = (await h.app.inject({ method: 'GET', url: '/api/v1/jobs', headers: auth(KEYS.pro) })).json();
    expect(list.jobs).toHaveLength(1);
  });

  it('documents every job operation in /openapi.json', async () => {
    const h = await jobsGateway();
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(Object.keys(doc.paths['/api/v1/jobs'])).toEqual(['post', 'get']);
    expect(doc.paths['/api/v1/jobs'].post.responses['202'].headers.Location).toBeDefined();
    expect(Object.keys(doc.paths['/api/v1/jobs/{job_id}'])).toEqual(['get', 'delete']);
    expect(
      doc.paths['/api/v1/jobs/{job_id}/results'].get.parameters.map((p: { name: string }) => p.name),
    ).toEqual(['job_id', 'limit', 'cursor']);
    expect(doc.paths['/api/v1/jobs/{job_id}'].get.parameters.map((p: { name: string }) => p.name)).toEqual([
      'job_id',
    ]);
  });
});
