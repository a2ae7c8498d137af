/**
 * Black-box: bulk jobs on the real `npm start` (gateway, job runner, extractor bulk workers on the
 * in-process bus, MongoDB-compatible store embedded) against the fake YouTube, as a client sees
 * them: a job over URLs with a webhook verified by a Standard Webhooks library, a playlist past
 * 25 videos paged through, a channel tab, an age-restricted channel, another account's 404, and the admin list the dashboard
 * shows.
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { channelUrls, longPlaylistId, startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import { waitFor } from '@subx/testing/wait';
import { startNpmStart } from './npm-start-process.ts';
import type { NpmStartProcess } from './npm-start-process.ts';
import { syntheticVideos } from './support.ts';

const ADMIN_TOKEN = 'system-test-admin-token-jobs-0123456789';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

let youtube: FakeYouTube;
let system: NpmStartProcess;
let receiver: Server;
let receiverUrl = '';
const deliveries: { headers: IncomingHttpHeaders; body: string }[] = [];

const REAL = [
  videoIds.manualAndAuto,
  videoIds.autoOnly,
  videoIds.manyManual,
  videoIds.audioTracks,
  videoIds.commentsDisabled,
];
const UNKNOWN = ['zzzzzzzzzz1', 'zzzzzzzzzz2', 'zzzzzzzzzz3'];
const watch = (id: string) => `https://www.youtube.com/watch?v=${id}`;

async function call(path: string, init: { method?: string; body?: unknown; key?: string } = {}) {
  const response = await fetch(`${system.base}${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      'x-api-key': init.key ?? system.apiKey,
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Json };
}

async function admin(path: string, body?: unknown) {
  const response = await fetch(`${system.adminUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${ADMIN_TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Json };
}

async function finished(jobId: string, key?: string): Promise<Json> {
  let job: Json = {};
  await waitFor(
    async () => {
      job = (await call(`/api/v1/jobs/${jobId}`, key ? { key } : {})).body;
      return ['completed', 'failed', 'canceled'].includes(job.status);
    },
    { timeoutMs: 60_000, intervalMs: 200, message: `job ${jobId} to end` },
  );
  return job;
}

async function allResults(jobId: string, limit: number): Promise<Json[]> {
  const results: Json[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 500; page++) {
    const query: string = `limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const { status, body } = await call(`/api/v1/jobs/${jobId}/results?${query}`);
    expect(status).toBe(200);
    results.push(...(body.results as Json[]));
    cursor = body.next_cursor as string | null;
    if (cursor === null) return results;
  }
  throw new Error('the results never ended');
}

beforeAll(async () => {
  // The long playlist's first videos (synthv00001...) answer like a recorded video.
  youtube = await startFakeYouTube({ routes: syntheticVideos(40, 'synthv').routes });
  receiver = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      deliveries.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks/subx`;
  system = await startNpmStart({
    YOUTUBE_BASE_URL: youtube.url,
    ADMIN_TOKEN,
    // The receiver is on loopback, which production refuses.
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    JOBS_POLL_MS: '100',
  });
}, 90_000);

afterAll(async () => {
  await system?.stop();
  await youtube?.close();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
});

describe('bulk jobs on npm start', () => {
  it('8 URLs (5 real, 3 unknown): completed with 5 succeeded and 3 failed, 5 credits, a verified job.completed webhook', async () => {
    const secret = await call('/api/v1/webhooks/secret');
    expect(secret.status).toBe(200);
    expect(secret.body.secret).toMatch(/^whsec_/);
    const before = (await admin(`/admin/v1/accounts/${system.accountId}`)).body.credits as number;

    const created = await call('/api/v1/jobs', {
      body: { source: { type: 'urls', urls: [...REAL, ...UNKNOWN].map(watch) }, webhook_url: receiverUrl },
    });
    expect(created.status).toBe(202);
    expect(created.headers.get('location')).toBe(`/api/v1/jobs/${created.body.job_id}`);
    const job = await finished(created.body.job_id);
    expect(job).toMatchObject({
      status: 'completed',
      progress: { total: 8, succeeded: 5, failed: 3, pending: 0 },
      credits_charged: 5,
    });
    const after = (await admin(`/admin/v1/accounts/${system.accountId}`)).body.credits as number;
    expect(before - after).toBe(5);

    await waitFor(async () => deliveries.length > 0, { timeoutMs: 20_000, message: 'the webhook' });
    const [delivery] = deliveries;
    const verified = new Webhook(secret.body.secret).verify(delivery!.body, {
      'webhook-id': String(delivery!.headers['webhook-id']),
      'webhook-timestamp': String(delivery!.headers['webhook-timestamp']),
      'webhook-signature': String(delivery!.headers['webhook-signature']),
    }) as Json;
    expect(verified).toMatchObject({
      type: 'job.completed',
      data: {
        job_id: job.job_id,
        status: 'completed',
        progress: { succeeded: 5, failed: 3 },
        credits_charged: 5,
      },
    });
    // A tampered body does not verify.
    expect(() =>
      new Webhook(secret.body.secret).verify(delivery!.body.replace('completed', 'failed'), {
        'webhook-id': String(delivery!.headers['webhook-id']),
        'webhook-timestamp': String(delivery!.headers['webhook-timestamp']),
        'webhook-signature': String(delivery!.headers['webhook-signature']),
      }),
    ).toThrow();
    // The delivery is visible on the job.
    await waitFor(
      async () => (await call(`/api/v1/jobs/${job.job_id}`)).body.webhook?.status === 'delivered',
      {
        timeoutMs: 10_000,
        message: 'the delivery on the job',
      },
    );
    const shown = (await call(`/api/v1/jobs/${job.job_id}`)).body.webhook;
    expect(shown.attempts[0]).toMatchObject({ attempt: 1, status_code: 204 });

    const results = await allResults(job.job_id, 3);
    expect(results.map((r) => r.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(results.filter((r) => r.success).map((r) => r.video_id)).toEqual(REAL);
  }, 120_000);

  it('a whole playlist goes past 25 videos, and its paginated results hold every item exactly once', async () => {
    const created = await call('/api/v1/jobs', {
      body: {
        source: { type: 'playlist', url: `https://www.youtube.com/playlist?list=${longPlaylistId}`, max: 30 },
      },
    });
    expect(created.status).toBe(202);
    const job = await finished(created.body.job_id);
    expect(job).toMatchObject({ status: 'completed', progress: { total: 30, succeeded: 30 } });
    const results = await allResults(job.job_id, 7);
    expect(results.map((r) => r.index)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    expect(new Set(results.map((r) => r.video_id)).size).toBe(30);
  }, 120_000);

  it('a channel job lists the channel’s videos tab', async () => {
    const created = await call('/api/v1/jobs', {
      body: { source: { type: 'channel', url: channelUrls.synthetic, tab: 'videos', max: 35 } },
    });
    expect(created.status).toBe(202);
    const job = await finished(created.body.job_id);
    expect(job.status).toBe('completed');
    expect(job.progress.total).toBe(35);
    expect(job.source).toMatchObject({ type: 'channel', tab: 'videos', max: 35 });
    expect(job.source.title).toBeTruthy();
  }, 120_000);

  it('a channel job over an age-restricted channel lists its videos in order, through its uploads playlist', async () => {
    const created = await call('/api/v1/jobs', {
      body: { source: { type: 'channel', url: channelUrls.ageRestricted, max: 30 } },
    });
    expect(created.status).toBe(202);
    const job = await finished(created.body.job_id);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    expect(job.progress).toMatchObject({ total: 30, succeeded: 30, failed: 0 });
    expect(job.source).toMatchObject({ type: 'channel', tab: 'videos', title: 'Subx Age Restricted' });
    const results = await allResults(created.body.job_id, 100);
    expect(results.map((r) => r.video_id)).toEqual(
      Array.from({ length: 30 }, (_, i) => `synthv${String(i + 1).padStart(5, '0')}`),
    );
  }, 120_000);

  it('another account gets 404 for a job, and the admin list (the dashboard’s) shows the account’s jobs', async () => {
    const other = await admin('/admin/v1/accounts', { tier: 'pro', credits: 10 });
    expect(other.status).toBe(201);
    const mine = (await call('/api/v1/jobs?limit=100')).body.jobs as Json[];
    expect(mine.length).toBeGreaterThanOrEqual(3);
    const theirs = await call(`/api/v1/jobs/${mine[0]!.job_id}`, { key: other.body.api_key });
    expect(theirs.status).toBe(404);
    expect(theirs.body.error.code).toBe('JOB_NOT_FOUND');
    const listed = await admin(`/admin/v1/accounts/${system.accountId}/jobs?limit=100`);
    expect(listed.status).toBe(200);
    expect((listed.body.jobs as Json[]).map((j) => j.job_id)).toEqual(mine.map((j) => j.job_id));
  });
});
