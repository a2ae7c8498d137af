/**
 * Jobs created with `chunking`: every successful result carries the chunks an extract would give,
 * and GET /api/v1/jobs/{id}/chunks downloads them as NDJSON, one chunk a line with its video_id.
 */
import { describe, expect, it } from 'vitest';
import { KEYS } from './support.ts';
import { REAL, UNKNOWN, auth, createJob, jobsGateway, unknownVideos, watch } from './jobs-support.ts';

const source = { type: 'urls', urls: [watch(REAL[0]!), watch(UNKNOWN[0]!), watch(REAL[1]!)] };

describe('job chunks', () => {
  it('results carry chunks, and the NDJSON download has every chunk of every finished item', async () => {
    const h = await jobsGateway();
    unknownVideos(h, UNKNOWN);
    const created = await createJob(h, { source, chunking: { max_tokens: 16, overlap_tokens: 4 } }, KEYS.pro);
    expect(created.statusCode, created.body).toBe(202);
    const jobId = created.json<{ job_id: string }>().job_id;
    expect(created.json()).toMatchObject({
      chunking: { max_tokens: 16, overlap_tokens: 4, split: 'chapters' },
    });
    await h.drain();

    const page = await h.app.inject({ url: `/api/v1/jobs/${jobId}/results`, headers: auth(KEYS.pro) });
    const results = page.json<{
      results: { success: boolean; video_id: string; chunks?: { text: string; token_count: number }[] }[];
    }>().results;
    const ok = results.filter((r) => r.success);
    expect(ok).toHaveLength(2);
    for (const r of ok) {
      expect(r.chunks!.length).toBeGreaterThan(0);
      for (const c of r.chunks!) expect(c.token_count).toBeLessThanOrEqual(16);
    }
    expect(results.find((r) => !r.success)?.chunks).toBeUndefined();

    const download = await h.app.inject({ url: `/api/v1/jobs/${jobId}/chunks`, headers: auth(KEYS.pro) });
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const lines = download.body
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { video_id: string; id: string });
    expect(lines.map((l) => l.id)).toEqual(
      ok.flatMap((r) => (r.chunks as unknown as { id: string }[]).map((c) => c.id)),
    );
    expect(lines.map((l) => l.video_id)).toEqual(ok.flatMap((r) => r.chunks!.map(() => r.video_id)));

    const one = await h.app.inject({ url: `/api/v1/jobs/${jobId}/results/0`, headers: auth(KEYS.pro) });
    expect(one.json<{ chunks: unknown[] }>().chunks).toEqual(ok[0]!.chunks);
  });

  it('refuses chunking on a job of documents, and a chunks download of such a job is 409', async () => {
    const h = await jobsGateway();
    const refused = await createJob(h, { source, format: 'srt', chunking: {} }, KEYS.pro);
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ error: { code: 'INVALID_REQUEST' } });
    const overlap = await createJob(
      h,
      { source, chunking: { max_tokens: 20, overlap_tokens: 11 } },
      KEYS.pro,
    );
    expect(overlap.statusCode).toBe(400);
    const srt = (await createJob(h, { source, format: 'srt' }, KEYS.pro)).json<{ job_id: string }>().job_id;
    const download = await h.app.inject({ url: `/api/v1/jobs/${srt}/chunks`, headers: auth(KEYS.pro) });
    expect(download.statusCode).toBe(409);
    expect(download.json()).toMatchObject({ error: { code: 'CONFLICT' } });
  });
});
