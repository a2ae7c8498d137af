/**
 * A live stream that has ended and is still being processed (`isPostLiveDvr`) has no caption track
 * yet, on the fake platform, through the real YouTube client, the extractor over gRPC and the
 * gateway: extract is 503 VIDEO_PROCESSING reason post_live with Retry-After (retryable, nothing
 * charged), never the final NO_SUBTITLES; validate says `processing`; a batch item carries
 * VIDEO_PROCESSING as its error_code; a bulk job parks such an item and asks again after the
 * Retry-After (capped short here by JOB_PROCESSING_RETRY_MAX_SECONDS), so once the stream has become
 * a finished video with captions the item succeeds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessEventBus } from '@subx/ports';
import { startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import type { FakeYouTube, FixtureRef } from '@subx/testing/fake-youtube';
import { waitFor } from '@subx/testing/wait';
import { startInProcessSystem } from './support.ts';
import type { InProcessSystem } from './support.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const watch = (id: string) => `https://www.youtube.com/watch?v=${id}`;

/** The post-live stream's /player answer once processing is complete: a finished video with captions. */
function processedStream(ref: FixtureRef): Json {
  const player = (ref as { inline: Json }).inline;
  const track = `https://www.youtube.com/api/timedtext?v=${videoIds.postLive}&caps=asr&kind=asr&lang=en`;
  return {
    ...player,
    videoDetails: { ...player.videoDetails, isPostLiveDvr: false },
    captions: {
      playerCaptionsTracklistRenderer: {
        captionTracks: [
          {
            baseUrl: track,
            name: { simpleText: 'English (auto-generated)' },
            vssId: 'a.en',
            languageCode: 'en',
            kind: 'asr',
            isTranslatable: true,
          },
        ],
        audioTracks: [{ captionTrackIndices: [0] }],
        translationLanguages: [],
      },
    },
  };
}

describe('a stream in processing through the gateway', () => {
  const bus = createInProcessEventBus();
  let yt: FakeYouTube;
  let system: InProcessSystem;

  beforeAll(async () => {
    yt = await startFakeYouTube({ mode: 'today' });
    system = await startInProcessSystem({
      youtubeUrl: yt.url,
      bus,
      credits: 20,
      gatewayEnv: { JOB_ITEM_ATTEMPTS: '2', JOBS_POLL_MS: '100', JOB_PROCESSING_RETRY_MAX_SECONDS: '1' },
    });
  });
  afterAll(async () => {
    await system?.stop();
    await bus.close();
    await yt?.close();
  });

  const request = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    system.gateway.app.inject({
      method,
      url,
      headers: {
        'x-api-key': system.apiKey,
        ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(payload === undefined ? {} : { payload: payload as Json }),
    });
  const balance = async () => (await system.gateway.access.accounts.get(system.accountId))?.credits;
  const playerCalls = (videoId: string) =>
    yt.requests.filter((r) => r.endpoint === 'player' && r.videoId === videoId).length;

  it('extract is 503 VIDEO_PROCESSING post_live with Retry-After, retryable, nothing charged', async () => {
    const before = await balance();
    const res = await request('POST', '/api/v1/extract', { url: watch(videoIds.postLive) });
    expect(res.statusCode, res.body).toBe(503);
    expect(res.headers['retry-after']).toBe('300');
    expect(res.json<{ error: unknown }>().error).toMatchObject({
      code: 'VIDEO_PROCESSING',
      reason: 'post_live',
      retryable: true,
      docs_url: '/docs/errors#video-processing',
    });
    expect(await balance()).toBe(before);
  });

  it('a stream live now is the same retryable answer, reason live', async () => {
    const res = await request('POST', '/api/v1/extract', { url: watch(videoIds.liveNow) });
    expect(res.statusCode, res.body).toBe(503);
    expect(res.headers['retry-after']).toBe('900');
    expect(res.json<{ error: unknown }>().error).toMatchObject({
      code: 'VIDEO_PROCESSING',
      reason: 'live',
      retryable: true,
    });
  });

  it('validate says processing, and was_live stays right on a video that has captions', async () => {
    const res = await request('GET', `/api/v1/validate?url=${encodeURIComponent(watch(videoIds.postLive))}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      valid: true,
      has_subtitles: false,
      reason: { code: 'processing' },
    });
    const live = await request('GET', `/api/v1/validate?url=${encodeURIComponent(watch(videoIds.liveNow))}`);
    expect(live.json()).toMatchObject({ valid: true, has_subtitles: false, reason: { code: 'live' } });
  });

  it('a batch item carries error_code VIDEO_PROCESSING beside a success', async () => {
    const res = await request('POST', '/api/v1/batch', {
      urls: [watch(videoIds.postLive), watch(videoIds.manualAndAuto)],
    });
    expect(res.statusCode, res.body).toBe(200);
    const results = res.json<{ results: Json[] }>().results;
    expect(results.map((r) => [r.success, r.error_code ?? null])).toEqual([
      [false, 'VIDEO_PROCESSING'],
      [true, null],
    ]);
  });

  it('a job parks the stream, asks again after Retry-After, and succeeds once it is processed', async () => {
    const asked = playerCalls(videoIds.postLive);
    const processingRoute = yt.routes.videos[videoIds.postLive]!;
    const processed = processedStream(processingRoute.player['*']!);
    const before = await balance();
    const created = await request('POST', '/api/v1/jobs', {
      source: { type: 'urls', urls: [watch(videoIds.postLive), watch(videoIds.autoOnly)] },
    });
    expect(created.statusCode, created.body).toBe(202);
    const jobId = created.json<{ job_id: string }>().job_id;
    let job: Json = {};
    // The other item done, the stream's parked: the job runs on, nothing charged for it.
    await waitFor(
      async () => {
        job = (await request('GET', `/api/v1/jobs/${jobId}`)).json();
        return job.progress?.succeeded === 1;
      },
      { timeoutMs: 60_000, intervalMs: 100, message: `job ${jobId} to finish its other item` },
    );
    expect(job).toMatchObject({ status: 'running', progress: { total: 2, failed: 0, pending: 1 } });
    expect(playerCalls(videoIds.postLive) - asked).toBeGreaterThanOrEqual(1);
    // Processing complete: the stream is now a video with captions.
    yt.routes.videos[videoIds.postLive] = { ...processingRoute, player: { '*': { inline: processed } } };
    try {
      await waitFor(
        async () => {
          job = (await request('GET', `/api/v1/jobs/${jobId}`)).json();
          return ['completed', 'failed'].includes(job.status);
        },
        { timeoutMs: 60_000, intervalMs: 200, message: `job ${jobId} to end` },
      );
    } finally {
      yt.routes.videos[videoIds.postLive] = processingRoute;
    }
    expect(job).toMatchObject({ status: 'completed', progress: { succeeded: 2, failed: 0 } });
    const page = (await request('GET', `/api/v1/jobs/${jobId}/results?limit=10`)).json<{ results: Json[] }>();
    const byVideo = Object.fromEntries(page.results.map((r) => [r.video_id, r]));
    expect(byVideo[videoIds.postLive]).toMatchObject({ success: true });
    expect(byVideo[videoIds.autoOnly]).toMatchObject({ success: true });
    expect(job.credits_charged).toBe(2);
    expect(await balance()).toBe(before! - 2);
  });
});
