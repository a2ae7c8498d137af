/**
 * The bulk jobs API through the real routes, store, runner, notifier and service (jobs-support.ts).
 * The runner's own rules (retries, credits, crashes, leases, the per-account cap) are in
 * jobs-runner.test.ts; the system test (test/system/jobs.test.ts) runs the contract on `npm start`
 * with the bulk workers and a real webhook receiver.
 */
import { describe, expect, it } from 'vitest';
import { Errors } from '@subx/errors';
import type { extractorV1 } from '@subx/contracts';
import { DEFAULT_PRICING } from '@subx/credits';
import { KEYS } from './support.ts';
import {
  REAL,
  UNKNOWN,
  allResults,
  auth,
  createJob,
  getJob,
  jobsGateway,
  unknownVideos,
  watch,
} from './jobs-support.ts';

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
    const done = await getJob(h, job.job_id);
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
    const job = await getJob(h, created.json().job_id);
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
    const job = await getJob(h, created.json().job_id);
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
    const job = await getJob(h, created.json().job_id);
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
    expect(list.json()).toEqual({ jobs: [], next_cursor: null, request_id: list.headers['x-request-id'] });
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
    // The JSON pages carry the same document (docs/clients.md: how generated clients read it).
    const page = await h.app.inject({
      method: 'GET',
      url: `/api/v1/jobs/${id}/results`,
      headers: auth(KEYS.pro),
    });
    expect(page.json().results[0]).toMatchObject({
      index: 0,
      success: true,
      format: 'srt',
      content: srt.body,
    });
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
