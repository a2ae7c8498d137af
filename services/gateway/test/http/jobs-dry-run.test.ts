/**
 * POST /api/v1/jobs with `dry_run: true`: the job's estimate, nothing created, reserved or charged;
 * and URLs naming the same video are one item, for a dry run and a real job alike.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_PRICING } from '../../src/access/pricing.ts';
import { KEYS } from './support.ts';
import { REAL, allResults, auth, createJob, getJob, jobsGateway, watch } from './jobs-support.ts';

const [A, B] = [REAL[0]!, REAL[1]!];
// Three spellings of A and one of B: two videos.
const SAME_VIDEO_URLS = [
  `https://youtu.be/${A}`,
  `https://www.youtube.com/watch?v=${A}&t=5`,
  watch(B),
  `https://www.youtube.com/shorts/${A}`,
];

async function listJobs(h: Awaited<ReturnType<typeof jobsGateway>>) {
  const res = await h.app.inject({ method: 'GET', url: '/api/v1/jobs', headers: auth(KEYS.pro) });
  return res.json().jobs as unknown[];
}

describe('POST /api/v1/jobs dry_run', () => {
  it('answers 200 with the estimate: three URLs of two videos are 2 items, 2 credits, 1 duplicate', async () => {
    const h = await jobsGateway();
    const res = await createJob(h, {
      source: {
        type: 'urls',
        urls: [`https://youtu.be/${A}`, `https://www.youtube.com/watch?v=${A}&t=5`, watch(B)],
      },
      dry_run: true,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers.location).toBeUndefined();
    expect(res.json()).toEqual({
      estimate: { items: 2, credits_max: 2, duplicates_removed: 1 },
      rate_limit: expect.objectContaining({ remaining: DEFAULT_PRICING.dailyLimit.pro! - 1 }),
      request_id: res.headers['x-request-id'],
    });
    // Nothing was created, reserved or charged.
    expect(await listJobs(h)).toEqual([]);
    expect(h.ledger.reservations).toEqual([]);
    expect(h.ledger.balances.get('acc_pro')).toBe(100);
    expect(h.events).toEqual([]);
  });

  it('estimates a playlist, channel or search by its max (not listed), and refuses what create refuses', async () => {
    const h = await jobsGateway();
    const playlist = await createJob(h, {
      source: { type: 'playlist', url: 'https://www.youtube.com/playlist?list=PLabcdefghijklmnop', max: 40 },
      dry_run: true,
    });
    expect(playlist.json().estimate).toEqual({ items: 40, credits_max: 40, duplicates_removed: 0 });
    const search = await createJob(h, { source: { type: 'search', query: 'cats' }, dry_run: true });
    expect(search.json().estimate.items).toBe(DEFAULT_PRICING.jobMaxItems.pro);
    // Nothing was listed: a dry run does not call the extractor.
    expect(h.backends.calls).toEqual([]);

    const badUrl = await createJob(h, {
      source: { type: 'playlist', url: 'https://www.youtube.com/watch?v=x' },
      dry_run: true,
    });
    expect(badUrl.statusCode).toBe(400);
    expect(badUrl.json().error.code).toBe('INVALID_URL');
    const free = await createJob(h, { source: { type: 'urls', urls: [watch(A)] }, dry_run: true }, KEYS.free);
    expect(free.statusCode).toBe(403);
    const tooMany = await createJob(h, {
      source: {
        type: 'playlist',
        url: 'https://www.youtube.com/playlist?list=PLabcdefghijklmnop',
        max: 5000,
      },
      dry_run: true,
    });
    expect(tooMany.statusCode).toBe(400);
    expect(await listJobs(h)).toEqual([]);
  });

  it('a real job holds each video once, at its first place, and charges it once', async () => {
    const h = await jobsGateway();
    const created = await createJob(h, { source: { type: 'urls', urls: SAME_VIDEO_URLS } });
    expect(created.statusCode).toBe(202);
    const job = created.json();
    expect(job).toMatchObject({ source: { type: 'urls', count: 2 }, progress: { total: 2 } });
    await h.drain();
    expect(await getJob(h, job.job_id)).toMatchObject({
      status: 'completed',
      progress: { total: 2, succeeded: 2, failed: 0 },
      credits_charged: 2,
    });
    expect(h.ledger.balances.get('acc_pro')).toBe(98);
    const results = await allResults(h, job.job_id, 10);
    expect(results.map((r) => [r.index, r.video_id])).toEqual([
      [0, A],
      [1, B],
    ]);
  });

  it('documents the estimate as createJob’s 200 answer in /openapi.json', async () => {
    const h = await jobsGateway();
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const create = doc.paths['/api/v1/jobs'].post;
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['200', '202']));
    expect(create.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/JobEstimateResult',
    });
    expect(doc.components.schemas.JobEstimate.required).toEqual([
      'items',
      'credits_max',
      'duplicates_removed',
    ]);
    expect(create.requestBody.content['application/json'].schema).toBeDefined();
  });
});
