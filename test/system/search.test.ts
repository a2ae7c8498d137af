/**
 * Black-box: discovery on the real `npm start` against the fake platform, which answers from the
 * recorded search pages: the first page's videos in the recorded order with a cursor to the second
 * page, a corrected query, bad input named, a job over the first 30 videos of a search, and a
 * playlist watch that starts a job for what it finds, then finds nothing new.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFixture, playlistIds, searchQueries, startFakeYouTube } from '@subx/testing/fake-youtube';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import { waitFor } from '@subx/testing/wait';
import { parseSearchPage } from '@subx/youtube';
import { startNpmStart } from './npm-start-process.ts';
import type { NpmStartProcess } from './npm-start-process.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

let youtube: FakeYouTube;
let system: NpmStartProcess;

/** The video ids of a recorded page, in order, read straight from the recording. */
const recordedVideoIds = (file: string) =>
  parseSearchPage(JSON.parse(loadFixture({ file: `newpipe/43f8e6e/search/${file}` }).body))
    .results.filter((r) => r.kind === 'video')
    .map((r) => r.id);

async function call(path: string, body?: unknown, method?: string) {
  const response = await fetch(`${system.base}${path}`, {
    method: method ?? (body === undefined ? 'GET' : 'POST'),
    headers: {
      'x-api-key': system.apiKey,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Json };
}
const search = (query: string) => call(`/api/v1/search?${query}`);

beforeAll(async () => {
  youtube = await startFakeYouTube();
  system = await startNpmStart({ YOUTUBE_BASE_URL: youtube.url, JOBS_POLL_MS: '100' });
}, 90_000);

afterAll(async () => {
  await system?.stop();
  await youtube?.close();
});

describe('GET /api/v1/search on npm start', () => {
  it('answers the first page’s videos in order, and next_cursor gives the second page', async () => {
    const first = await search('q=test&type=video');
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.query).toBe('test');
    expect(first.body.results.map((r: Json) => r.video_id)).toEqual(
      recordedVideoIds('all/generated_mock_2.json'),
    );
    for (const r of first.body.results as Json[]) {
      expect(r).toMatchObject({
        type: 'video',
        url: expect.stringMatching(/^https:\/\/www\.youtube\.com\//),
      });
      expect(typeof r.title).toBe('string');
    }
    expect(first.body.next_cursor).toEqual(expect.any(String));
    expect(first.body.credits_used).toBe(0);

    const second = await search(`q=test&type=video&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body.results).toHaveLength(24);
    expect(second.body.results.every((r: Json) => r.type === 'video')).toBe(true);
    const overlap = second.body.results.filter((r: Json) =>
      first.body.results.some((f: Json) => f.video_id === r.video_id),
    );
    expect(overlap).toEqual([]);
  });

  it('a cursor sent with another query is 400 naming cursor', async () => {
    const first = await search('q=test&type=video');
    const other = await search(`q=sidemen&type=video&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    expect(other.status).toBe(400);
    expect(other.body.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'cursor' });
    const garbage = await search('q=test&cursor=not-a-cursor');
    expect(garbage.status).toBe(400);
    expect(garbage.body.error).toMatchObject({ code: 'INVALID_REQUEST', field: 'cursor' });
  });

  it('a misspelled query answers corrected_query with the corrected results; shorts and live are marked', async () => {
    const res = await search(`q=${encodeURIComponent(searchQueries.didYouMean)}`);
    expect(res.status).toBe(200);
    expect(res.body.corrected_query).toBe('on boarding');
    expect(res.body.results.length).toBeGreaterThan(0);
    const shorts = await search(`q=${encodeURIComponent(searchQueries.shorts)}&type=video`);
    expect(shorts.body.corrected_query).toBe('shorts');
    const short = shorts.body.results.find((r: Json) => r.is_short);
    expect(short.url).toBe(`https://www.youtube.com/shorts/${short.video_id}`);
    const live = shorts.body.results.find((r: Json) => r.is_live);
    expect(live).toMatchObject({ duration: null, view_count: null });
    const plain = await search('q=test&type=video');
    expect(plain.body).not.toHaveProperty('corrected_query');
  });

  it('channels and playlists come back typed', async () => {
    const channels = await search('q=test&type=channel');
    expect(channels.body.results.map((r: Json) => r.type)).toEqual(Array(20).fill('channel'));
    expect(channels.body.results[0].url).toMatch(/^https:\/\/www\.youtube\.com\/channel\/UC/);
    const playlists = await search('q=test&type=playlist');
    expect(playlists.body.results[0]).toMatchObject({ type: 'playlist', playlist_id: expect.any(String) });
  });

  it('bad input is 400 INVALID_REQUEST naming the field', async () => {
    for (const [query, field] of [
      ['q=', 'q'],
      ['q=%20%20', 'q'],
      [`q=${'x'.repeat(201)}`, 'q'],
      ['', 'q'],
      ['q=test&type=song', 'type'],
      ['q=test&upload_date=decade', 'upload_date'],
      ['q=test&duration=epic', 'duration'],
      ['q=test&sort=random', 'sort'],
      ['q=test&features=subtitles,smell', 'features'],
    ] as const) {
      const res = await search(query);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code, query).toBe('INVALID_REQUEST');
      expect(JSON.stringify(res.body.error), query).toContain(field);
    }
  });
});

describe('a search job on npm start', () => {
  it('max 30: 30 items, the search’s first videos in order, and the job completes', async () => {
    const created = await call('/api/v1/jobs', {
      source: { type: 'search', query: searchQueries.sidemen, search_type: 'video', max: 30 },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const jobId = created.body.job_id as string;
    let job: Json = {};
    await waitFor(
      async () => {
        job = (await call(`/api/v1/jobs/${jobId}`)).body;
        return ['completed', 'failed', 'canceled'].includes(job.status);
      },
      { timeoutMs: 60_000, intervalMs: 200, message: `job ${jobId} to end` },
    );
    expect(job.status).toBe('completed');
    expect(job.progress.total).toBe(30);
    expect(job.source).toMatchObject({ type: 'search', query: searchQueries.sidemen, max: 30 });
    const results = (await call(`/api/v1/jobs/${jobId}/results?limit=100`)).body.results as Json[];
    const expected = [
      ...recordedVideoIds('videouploaderavatar/generated_mock_2.json'),
      ...recordedVideoIds('videouploaderavatar/generated_mock_3.json'),
    ].slice(0, 30);
    expect(results.map((r) => r.index)).toEqual([...Array(30).keys()]);
    expect(results.map((r) => r.video_id ?? r.url.split('v=')[1])).toEqual(expected);
  });

  it('an empty query is 400 naming it, and creates nothing', async () => {
    const before = (await call('/api/v1/jobs')).body.jobs.length;
    const res = await call('/api/v1/jobs', { source: { type: 'search', query: '   ' } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.error)).toContain('query');
    expect((await call('/api/v1/jobs')).body.jobs.length).toBe(before);
  });
});

describe('a playlist watch on npm start', () => {
  it('with backfill: its first run starts a job for the playlist’s videos; the second finds nothing new', async () => {
    const created = await call('/api/v1/watches', {
      source: { type: 'playlist', url: `https://www.youtube.com/playlist?list=${playlistIds.small}` },
      interval_minutes: 60,
      backfill: true,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.watch_id as string;
    // The scheduler may take the first run (it is due at once): run it now, or read what it did.
    let first = await call(`/api/v1/watches/${id}/run`, undefined, 'POST');
    if (first.status === 409 || first.body.new_videos === 0) {
      await waitFor(async () => (await call(`/api/v1/watches/${id}`)).body.runs >= 1, {
        timeoutMs: 30_000,
        intervalMs: 200,
        message: 'the first run',
      });
      const watch = (await call(`/api/v1/watches/${id}`)).body;
      first = { status: 200, body: watch.last_run.run === 1 ? watch.last_run : first.body };
    }
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.new_videos).toBe(17);
    const job = await call(`/api/v1/jobs/${String(first.body.job_id)}`);
    expect(job.body).toMatchObject({ source: { type: 'urls', count: 17 } });
    const second = await call(`/api/v1/watches/${id}/run`, undefined, 'POST');
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body).toMatchObject({ new_videos: 0, job_id: null });
    const listed = await call('/api/v1/watches');
    expect(listed.body.watches.map((w: Json) => w.watch_id)).toContain(id);
    expect((await call(`/api/v1/watches/${id}`, undefined, 'DELETE')).body).toMatchObject({ deleted: true });
  });
});
