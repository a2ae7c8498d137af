/**
 * Watches through the real routes, service, store (in-memory document store) and jobs service, over
 * fake backends: a run finds only what is new and starts one job for it, a first run without
 * backfill only records, upcoming and live videos wait until they can be read, a listing that fails
 * keeps the videos new, runs are leased (one at a time across replicas, taken over when a lease
 * lapses), and the limits, tiers and ownership rules hold.
 */
import { describe, expect, it } from 'vitest';
import { Errors } from '@subx/errors';
import type { extractorV1 } from '@subx/contracts';
import { DEFAULT_PRICING } from '@subx/credits';
import { KEYS } from './support.ts';
import { CONFIG, PLAYLIST, auth, createWatch, get, harness, post, run } from './watches-support.ts';

describe('watches', () => {
  it('a playlist watch with backfill starts a job on its first run, and finds nothing new on the second', async () => {
    const h = await harness();
    h.playlist = ['aaaaaaaaaa1', 'aaaaaaaaaa2', 'aaaaaaaaaa3'];
    const w = await createWatch(h, {
      source: { type: 'playlist', url: PLAYLIST },
      backfill: true,
      webhook_url: 'https://hooks.example/subx',
      format: 'srt',
    });
    expect(w).toMatchObject({ runs: 0, last_run: null, backfill: true, format: 'srt', seen_videos: 0 });
    const first = await run(h, w.watch_id);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ new_videos: 3, job_id: expect.stringMatching(/^job_/) });
    const job = (await get(h, `/api/v1/jobs/${String(first.body.job_id)}`)).json();
    expect(job).toMatchObject({ source: { type: 'urls', count: 3 }, format: 'srt' });
    const second = await run(h, w.watch_id);
    expect(second.body).toMatchObject({ new_videos: 0, job_id: null });
    expect(h.webhooks).toEqual([
      {
        accountId: 'acc_pro',
        url: 'https://hooks.example/subx',
        subject: `${w.watch_id}:run-1`,
        event: 'watch.new_videos',
        data: {
          watch_id: w.watch_id,
          run: 1,
          new_videos: 3,
          video_ids: h.playlist,
          job_id: first.body.job_id,
        },
      },
    ]);
    expect(h.events).toEqual([
      { type: 'watch.created', run: 0 },
      { type: 'watch.new_videos', run: 1 },
    ]);
    const shown = (await get(h, `/api/v1/watches/${w.watch_id}`)).json();
    expect(shown).toMatchObject({
      runs: 2,
      seen_videos: 3,
      last_run: { run: 2, new_videos: 0, job_id: null },
    });
  });

  it('a watch with mode: shown on the watch and carried by the jobs it starts', async () => {
    const h = await harness();
    h.playlist = ['aaaaaaaaaa1'];
    const w = await createWatch(h, {
      source: { type: 'playlist', url: PLAYLIST },
      backfill: true,
      mode: 'auto',
    });
    expect(w).toMatchObject({ mode: 'auto' });
    const first = await run(h, w.watch_id);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const job = (await get(h, `/api/v1/jobs/${String(first.body.job_id)}`)).json();
    expect(job).toMatchObject({ mode: 'auto' });
    const plain = await createWatch(h, { source: { type: 'playlist', url: PLAYLIST } });
    expect(plain).toMatchObject({ mode: 'captions' });
  });

  it('without backfill the first run only records; a later run delivers only what was added', async () => {
    const h = await harness();
    h.playlist = ['aaaaaaaaaa1', 'aaaaaaaaaa2'];
    const w = await createWatch(h, { source: { type: 'playlist', url: PLAYLIST } });
    expect((await run(h, w.watch_id)).body).toMatchObject({ new_videos: 0, job_id: null });
    h.playlist = ['bbbbbbbbbb1', 'aaaaaaaaaa1', 'bbbbbbbbbb2', 'aaaaaaaaaa2'];
    const later = await run(h, w.watch_id);
    expect(later.body).toMatchObject({ new_videos: 2 });
    expect(h.webhooks.map((d) => d.data.video_ids)).toEqual([['bbbbbbbbbb1', 'bbbbbbbbbb2']]);
  });

  it('upcoming premieres and live streams are not seen until they can be read', async () => {
    const h = await harness();
    const video = (
      videoId: string,
      extra: Partial<extractorV1.ChannelVideo> = {},
    ): extractorV1.ChannelVideo => ({
      videoId,
      title: videoId,
      publishedText: '',
      isLive: false,
      isUpcoming: false,
      ...extra,
    });
    let listed = [
      video('premiere000', { isUpcoming: true }),
      video('livenow0000', { isLive: true }),
      video('old00000000'),
    ];
    h.gw.backends.handlers.listChannelVideos = async () => ({
      channelId: 'UCaaaaaaaaaaaaaaaaaaaaaa',
      title: 'C',
      handle: 'c',
      tab: 1,
      videos: listed,
      hasMore: false,
      cached: false,
    });
    const w = await createWatch(h, {
      source: { type: 'channel', url: 'https://www.youtube.com/@WatchedChannel' },
      backfill: true,
    });
    expect((await run(h, w.watch_id)).body).toMatchObject({ new_videos: 1 });
    listed = [video('premiere000'), video('livenow0000'), video('old00000000')];
    expect((await run(h, w.watch_id)).body).toMatchObject({ new_videos: 2 });
    expect(h.webhooks.map((d) => d.data.video_ids)).toEqual([
      ['old00000000'],
      ['premiere000', 'livenow0000'],
    ]);
  });

  it('a source that cannot be listed answers its error, is recorded, and keeps the videos new', async () => {
    const h = await harness();
    h.playlist = ['aaaaaaaaaa1'];
    const w = await createWatch(h, { source: { type: 'playlist', url: PLAYLIST }, backfill: true });
    const listing = h.gw.backends.handlers.listPlaylistVideos;
    h.gw.backends.handlers.listPlaylistVideos = async (req) => {
      throw Errors.playlistNotFound(req.playlistId);
    };
    const failed = await run(h, w.watch_id);
    expect(failed.status).toBe(404);
    expect(failed.body).toMatchObject({ error: { code: 'PLAYLIST_NOT_FOUND' } });
    expect((await get(h, `/api/v1/watches/${w.watch_id}`)).json()).toMatchObject({
      runs: 1,
      seen_videos: 0,
      last_run: { error: { code: 'PLAYLIST_NOT_FOUND' } },
    });
    h.gw.backends.handlers.listPlaylistVideos = listing;
    expect((await run(h, w.watch_id)).body).toMatchObject({ new_videos: 1 });
    expect(h.events.map((e) => e.type)).toEqual(['watch.created', 'watch.run_failed', 'watch.new_videos']);
  });

  it('the scheduler runs due watches once across replicas; a lapsed lease is taken over', async () => {
    const h = await harness();
    h.playlist = ['aaaaaaaaaa1'];
    const w = await createWatch(h, {
      source: { type: 'playlist', url: PLAYLIST },
      backfill: true,
      interval_minutes: 15,
    });
    const [a, b] = await Promise.all([h.watches.runDue(10), h.replica.runDue(10)]);
    expect(a + b).toBe(1);
    expect(await h.watches.runDue(10)).toBe(0);
    h.clock.advance(15 * 60_000);
    h.playlist = ['aaaaaaaaaa2', 'aaaaaaaaaa1'];
    // A replica takes the watch and dies mid-run: nobody runs it until its lease lapses.
    expect(
      await h.store.claim(w.watch_id, 'dead-replica', h.clock.now(), CONFIG.WATCH_LEASE_MS),
    ).not.toBeNull();
    expect(await h.replica.runDue(10)).toBe(0);
    const busy = await run(h, w.watch_id);
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({ error: { code: 'CONFLICT' } });
    h.clock.advance(CONFIG.WATCH_LEASE_MS + 1);
    expect(await h.replica.runDue(10)).toBe(1);
    expect(h.webhooks.map((d) => d.data.video_ids)).toEqual([['aaaaaaaaaa1'], ['aaaaaaaaaa2']]);
  });

  it('checks interval, tier, the per-tier cap and ownership', async () => {
    const h = await harness({ ...DEFAULT_PRICING, watchMax: { ...DEFAULT_PRICING.watchMax, pro: 1 } });
    const body = { source: { type: 'playlist', url: PLAYLIST }, interval_minutes: 60 };
    const short = await post(h, '/api/v1/watches', { ...body, interval_minutes: 14 });
    expect(short.statusCode).toBe(400);
    expect(short.json().error.code).toBe('INVALID_REQUEST');
    expect((await post(h, '/api/v1/watches', body, KEYS.free)).statusCode).toBe(403);
    const bad = await post(h, '/api/v1/watches', {
      ...body,
      source: { type: 'playlist', url: 'https://example.com/x' },
    });
    expect(bad.statusCode).toBe(400);
    const w = await createWatch(h, body);
    const over = await post(h, '/api/v1/watches', body);
    expect(over.statusCode).toBe(400);
    expect(over.json().error).toMatchObject({ code: 'INVALID_REQUEST', max_watches: 1 });
    expect((await get(h, `/api/v1/watches/${w.watch_id}`, KEYS.pro2)).statusCode).toBe(404);
    expect((await post(h, `/api/v1/watches/${w.watch_id}/run`, undefined, KEYS.pro2)).statusCode).toBe(404);
    expect((await get(h, '/api/v1/watches', KEYS.pro2)).json().watches).toEqual([]);
    expect(
      (await get(h, '/api/v1/watches')).json().watches.map((x: { watch_id: string }) => x.watch_id),
    ).toEqual([w.watch_id]);
    const del = await h.gw.app.inject({
      method: 'DELETE',
      url: `/api/v1/watches/${w.watch_id}`,
      headers: auth(KEYS.pro),
    });
    expect(del.json()).toMatchObject({ watch_id: w.watch_id, deleted: true });
    expect((await get(h, `/api/v1/watches/${w.watch_id}`)).statusCode).toBe(404);
    expect(h.events.map((e) => e.type)).toEqual(['watch.created', 'watch.deleted']);
  });
});
