/**
 * A watch's videos whose captions are missing when their job runs: the next runs read the job's
 * results, hand those videos to their own job again until they succeed or WATCH_CAPTION_RETRY_HOURS
 * pass, and let final failures go. Real routes, watches and jobs services, job runner (direct
 * fan-out) and in-memory store over fake backends whose videos gain captions between runs.
 */
import { describe, expect, it } from 'vitest';
import { Errors } from '@subx/errors';
import { transcript } from './support.ts';
import { PLAYLIST, createWatch, get, harness, run } from './watches-support.ts';
import type { Harness } from './watches-support.ts';

const HOUR = 3_600_000;

/** Videos in `captioned` answer a transcript; `gone` are final failures; the rest have no captions yet. */
function platform(h: Harness, captioned: Set<string>, gone: Set<string> = new Set()) {
  h.gw.backends.handlers.getTranscript = async (req) => {
    if (gone.has(req.videoId)) throw Errors.videoNotFound(req.videoId);
    if (!captioned.has(req.videoId)) throw Errors.noSubtitles(req.videoId);
    return transcript(req.videoId);
  };
}

async function results(h: Harness, jobId: unknown) {
  const res = await get(h, `/api/v1/jobs/${String(jobId)}/results?limit=100`);
  expect(res.statusCode, res.body).toBe(200);
  return (
    res.json() as { results: { video_id: string; success: boolean; error_code?: string }[] }
  ).results.map((r) => [r.video_id, r.success ? 'ok' : r.error_code]);
}

describe('watches retry videos whose captions are missing', () => {
  it('retries them on later runs until they have captions; successes and final failures are let go', async () => {
    const h = await harness();
    const captioned = new Set(['withcaps001']);
    platform(h, captioned, new Set(['removed0001']));
    h.playlist = ['withcaps001', 'nocapsyet01', 'removed0001'];
    const w = await createWatch(h, { source: { type: 'playlist', url: PLAYLIST }, backfill: true });

    const first = await run(h, w.watch_id);
    expect(first.body).toMatchObject({ new_videos: 3, retried_videos: 0 });
    // The job has not run yet: the next run follows its videos and retries nothing.
    h.clock.advance(HOUR);
    expect((await run(h, w.watch_id)).body).toMatchObject({ new_videos: 0, retried_videos: 0, job_id: null });
    expect((await get(h, `/api/v1/watches/${w.watch_id}`)).json()).toMatchObject({ pending_videos: 3 });
    await h.drain();
    expect(await results(h, first.body.job_id)).toEqual([
      ['withcaps001', 'ok'],
      ['nocapsyet01', 'NO_SUBTITLES'],
      ['removed0001', 'VIDEO_NOT_FOUND'],
    ]);
    expect(h.balance('acc_pro')).toBe(99);

    h.clock.advance(HOUR);
    const second = await run(h, w.watch_id);
    expect(second.body).toMatchObject({
      new_videos: 0,
      retried_videos: 1,
      job_id: expect.stringMatching(/^job_/),
    });
    expect((await get(h, `/api/v1/jobs/${String(second.body.job_id)}`)).json()).toMatchObject({
      source: { type: 'urls', count: 1 },
    });
    await h.drain();
    expect(await results(h, second.body.job_id)).toEqual([['nocapsyet01', 'NO_SUBTITLES']]);
    expect((await get(h, `/api/v1/watches/${w.watch_id}`)).json()).toMatchObject({
      pending_videos: 1,
      last_run: { new_videos: 0, retried_videos: 1, job_id: second.body.job_id },
    });

    // The platform adds the captions; the next run's job reads them, charged for that success only.
    captioned.add('nocapsyet01');
    h.clock.advance(HOUR);
    h.playlist = ['newvideo001', ...h.playlist];
    captioned.add('newvideo001');
    const third = await run(h, w.watch_id);
    expect(third.body).toMatchObject({ new_videos: 1, retried_videos: 1 });
    await h.drain();
    expect(await results(h, third.body.job_id)).toEqual([
      ['newvideo001', 'ok'],
      ['nocapsyet01', 'ok'],
    ]);
    expect(h.balance('acc_pro')).toBe(97);

    h.clock.advance(HOUR);
    expect((await run(h, w.watch_id)).body).toMatchObject({ new_videos: 0, retried_videos: 0, job_id: null });
    expect((await get(h, `/api/v1/watches/${w.watch_id}`)).json()).toMatchObject({ pending_videos: 0 });
    // Runs that only retried announce no new videos; the first and third did.
    expect(h.webhooks.map((d) => d.data.video_ids)).toEqual([
      ['withcaps001', 'nocapsyet01', 'removed0001'],
      ['newvideo001'],
    ]);
  });

  it('gives up once WATCH_CAPTION_RETRY_HOURS have passed since the video was found, free', async () => {
    const h = await harness();
    platform(h, new Set());
    h.playlist = ['nevercaps01'];
    const w = await createWatch(h, { source: { type: 'playlist', url: PLAYLIST }, backfill: true });
    expect((await run(h, w.watch_id)).body).toMatchObject({ new_videos: 1 });
    await h.drain();
    h.clock.advance(47 * HOUR);
    const retried = await run(h, w.watch_id);
    expect(retried.body).toMatchObject({ retried_videos: 1, job_id: expect.stringMatching(/^job_/) });
    await h.drain();
    h.clock.advance(1 * HOUR);
    const late = await run(h, w.watch_id);
    expect(late.body).toMatchObject({ new_videos: 0, retried_videos: 0, job_id: null });
    expect((await get(h, `/api/v1/watches/${w.watch_id}`)).json()).toMatchObject({
      pending_videos: 0,
      last_run: { retried_videos: 0, job_id: null, error: null },
    });
    expect(h.balance('acc_pro')).toBe(100);
  });

  it('stops following videos whose job has not reached them once the bound has passed', async () => {
    const h = await harness();
    platform(h, new Set());
    h.playlist = ['stuckjob001'];
    const w = await createWatch(h, { source: { type: 'playlist', url: PLAYLIST }, backfill: true });
    await run(h, w.watch_id);
    // The job never runs (no runner polls here): the watch follows its video for the bound only.
    h.clock.advance(47 * HOUR);
    expect((await run(h, w.watch_id)).body).toMatchObject({ retried_videos: 0, job_id: null });
    expect((await get(h, `/api/v1/watches/${w.watch_id}`)).json()).toMatchObject({ pending_videos: 1 });
    h.clock.advance(1 * HOUR);
    await run(h, w.watch_id);
    expect((await get(h, `/api/v1/watches/${w.watch_id}`)).json()).toMatchObject({ pending_videos: 0 });
  });

  it('a run whose job cannot be started keeps the retries for the next run', async () => {
    const h = await harness();
    const captioned = new Set<string>();
    platform(h, captioned);
    h.playlist = ['latecaps001'];
    const w = await createWatch(h, { source: { type: 'playlist', url: PLAYLIST }, backfill: true });
    await run(h, w.watch_id);
    await h.drain();
    const listing = h.gw.backends.handlers.listPlaylistVideos;
    h.gw.backends.handlers.listPlaylistVideos = async (req) => {
      throw Errors.playlistNotFound(req.playlistId);
    };
    h.clock.advance(HOUR);
    expect((await run(h, w.watch_id)).status).toBe(404);
    expect((await get(h, `/api/v1/watches/${w.watch_id}`)).json()).toMatchObject({ pending_videos: 1 });
    h.gw.backends.handlers.listPlaylistVideos = listing;
    captioned.add('latecaps001');
    h.clock.advance(HOUR);
    const next = await run(h, w.watch_id);
    expect(next.body).toMatchObject({ new_videos: 0, retried_videos: 1 });
    await h.drain();
    expect(await results(h, next.body.job_id)).toEqual([['latecaps001', 'ok']]);
  });
});
