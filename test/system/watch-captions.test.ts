/**
 * Black-box: a playlist watch on the real `npm start` against the fake platform, one of whose videos
 * has no captions when the watch's first job reads it and gains them before the next run: that run's
 * job takes it again and succeeds, and the run after retries nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playlistIds, startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import type { FakeYouTube, FixtureRef, VideoRoute } from '@subx/testing/fake-youtube';
import { waitFor } from '@subx/testing/wait';
import { startNpmStart } from './npm-start-process.ts';
import type { NpmStartProcess } from './npm-start-process.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const PLAYLIST = `https://www.youtube.com/playlist?list=${playlistIds.small}`;
let youtube: FakeYouTube;
let system: NpmStartProcess;

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

/** A recorded video's answers rewritten to another id (the fake's derived fixtures), captions included. */
function routeAs(from: string, to: string): VideoRoute {
  const src = youtube.routes.videos[from]!;
  const derive = (ref: FixtureRef): FixtureRef => ({ derive: ref, fromVideoId: from, videoId: to });
  const each = (table: Record<string, FixtureRef>) =>
    Object.fromEntries(Object.entries(table).map(([client, ref]) => [client, derive(ref)]));
  return {
    ...src,
    player: each(src.player),
    ...(src.todayPlayer ? { todayPlayer: each(src.todayPlayer) } : {}),
    ...(src.next ? { next: derive(src.next) } : {}),
    ...(src.microformat ? { microformat: derive(src.microformat) } : {}),
  };
}

/** Waits for the job to end; its items as [video_id, 'ok' | error_code]. */
async function outcomes(jobId: string): Promise<[string, string][]> {
  await waitFor(async () => (await call(`/api/v1/jobs/${jobId}`)).body.status === 'completed', {
    timeoutMs: 60_000,
    intervalMs: 200,
    message: `job ${jobId} to complete`,
  });
  const page = await call(`/api/v1/jobs/${jobId}/results?limit=100`);
  return (page.body.results as Json[]).map((r) => [r.video_id, r.success ? 'ok' : r.error_code]);
}

beforeAll(async () => {
  youtube = await startFakeYouTube();
  // Runs only when the test asks (the scheduler's first poll is an hour away).
  system = await startNpmStart({
    YOUTUBE_BASE_URL: youtube.url,
    JOBS_POLL_MS: '100',
    WATCHES_POLL_MS: '3600000',
  });
}, 90_000);

afterAll(async () => {
  await system?.stop();
  await youtube?.close();
});

describe('a watch on npm start', () => {
  it('retries a video whose captions were missing, on the next run, until it is read', async () => {
    // The playlist's first video, which the platform knows but without captions for now.
    const listed = await call(`/api/v1/playlist?url=${encodeURIComponent(PLAYLIST)}&max=1`);
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    const late = listed.body.results[0].video_id as string;
    const videos = youtube.routes.videos;
    videos[late] = routeAs(videoIds.noCaptions, late);

    const created = await call('/api/v1/watches', {
      source: { type: 'playlist', url: PLAYLIST },
      interval_minutes: 60,
      backfill: true,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.watch_id as string;
    const first = await call(`/api/v1/watches/${id}/run`, undefined, 'POST');
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ new_videos: 17, retried_videos: 0 });
    const firstItems = await outcomes(first.body.job_id as string);
    expect(firstItems.find(([v]) => v === late)).toEqual([late, 'NO_SUBTITLES']);

    // The platform adds the captions before the next run.
    videos[late] = routeAs(videoIds.manualAndAuto, late);
    const second = await call(`/api/v1/watches/${id}/run`, undefined, 'POST');
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body).toMatchObject({ new_videos: 0, retried_videos: 1 });
    expect(await outcomes(second.body.job_id as string)).toEqual([[late, 'ok']]);

    const third = await call(`/api/v1/watches/${id}/run`, undefined, 'POST');
    expect(third.body).toMatchObject({ new_videos: 0, retried_videos: 0, job_id: null });
    expect((await call(`/api/v1/watches/${id}`)).body).toMatchObject({ pending_videos: 0 });
  });
});
