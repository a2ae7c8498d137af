import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { extractorV1 } from '@subx/contracts';
import { AppError } from '@subx/errors';
import { type GrpcClient } from '@subx/service-kit';
import {
  channelIds,
  channelUrls,
  longPlaylistId,
  playlistIds,
  startFakeYouTube,
  syntheticChannelVideoId,
  type FakeYouTube,
} from '@subx/testing/fake-youtube';
import { startTestExtractor, type TestExtractor } from './fixtures/extractor-service.ts';

/** ListPlaylistVideos and ListChannelVideos (bulk jobs) through a real gRPC client. */

const { ChannelTab } = extractorV1;

describe('extractor listings over gRPC against the fake YouTube', () => {
  let youtube: FakeYouTube;
  let extractor: TestExtractor;
  let client: GrpcClient<extractorV1.ExtractorServiceClient>;

  beforeAll(async () => {
    youtube = await startFakeYouTube();
    extractor = await startTestExtractor({
      youtubeEnv: { YOUTUBE_BASE_URL: youtube.url, YOUTUBE_RETRIES: '0' },
      deadlineMs: 20_000,
    });
    client = extractor.client;
  });

  afterAll(async () => {
    await extractor?.stop();
    await youtube?.close();
  });

  beforeEach(() => youtube.reset());

  const errorOf = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (e: unknown) => e as AppError,
    );

  it('lists a playlist past 25: 1,200 of 1,500 in order, then the same answer from the cache', async () => {
    const p = await client.listPlaylistVideos({ playlistId: longPlaylistId, maxVideos: 1200 });
    expect(p.videoIds).toHaveLength(1200);
    expect(p.videoIds[0]).toBe('synthv00001');
    expect(p.videoIds[1199]).toBe('synthv01200');
    expect(p).toMatchObject({ totalVideos: 1500, hasMore: true, cached: false });
    expect(youtube.count('browse')).toBe(12);
    const again = await client.listPlaylistVideos({ playlistId: longPlaylistId, maxVideos: 1200 });
    expect(again).toMatchObject({ cached: true, hasMore: true });
    expect(again.videoIds).toEqual(p.videoIds);
    expect(youtube.count('browse')).toBe(12);
  });

  it('keeps GetPlaylist at 25 (the public playlist route)', async () => {
    const err = await errorOf(client.getPlaylist({ playlistId: longPlaylistId, maxVideos: 26 }));
    expect(err?.code).toBe('INVALID_REQUEST');
  });

  it('playlist errors keep their codes: unknown playlist, bad id, max out of range', async () => {
    expect(
      (await errorOf(client.listPlaylistVideos({ playlistId: playlistIds.notFound, maxVideos: 10 })))?.code,
    ).toBe('PLAYLIST_NOT_FOUND');
    expect((await errorOf(client.listPlaylistVideos({ playlistId: 'x', maxVideos: 10 })))?.code).toBe(
      'INVALID_URL',
    );
    for (const maxVideos of [0, -1, 10_001])
      expect(
        (await errorOf(client.listPlaylistVideos({ playlistId: longPlaylistId, maxVideos })))?.code,
      ).toBe('INVALID_REQUEST');
  });

  it('lists a channel tab from a /user/ URL with what the page shows about each video', async () => {
    const c = await client.listChannelVideos({
      url: channelUrls.creativeCommons,
      tab: ChannelTab.CHANNEL_TAB_VIDEOS,
      maxVideos: 40,
    });
    expect(c).toMatchObject({
      channelId: channelIds.creativeCommons,
      title: 'Creative Commons',
      handle: 'creativecommons',
      tab: ChannelTab.CHANNEL_TAB_VIDEOS,
      hasMore: true,
      cached: false,
    });
    expect(c.videos).toHaveLength(40);
    expect(c.videos[0]).toEqual({
      videoId: 'BD-LB23rRBE',
      title:
        'Expert Panel III: Global Perspectives on Open Heritage and Diversity, Inclusion, and Sustainability',
      durationSeconds: 4054,
      publishedText: '13 days ago',
      viewCount: 28n,
      isLive: false,
      isUpcoming: false,
    });
    expect(youtube.count('resolve_url')).toBe(1);
  });

  it('takes the tab from the URL when the request names none; the cache key ignores host and query', async () => {
    const first = await client.listChannelVideos({
      url: `${channelUrls.synthetic}/shorts`,
      tab: ChannelTab.CHANNEL_TAB_UNSPECIFIED,
      maxVideos: 100,
    });
    expect(first.tab).toBe(ChannelTab.CHANNEL_TAB_SHORTS);
    expect(first.videos.map((v) => v.videoId).slice(0, 2)).toEqual([
      syntheticChannelVideoId('shorts', 1),
      syntheticChannelVideoId('shorts', 2),
    ]);
    expect(first.videos[0]?.durationSeconds).toBeUndefined();
    const calls = youtube.count();
    const second = await client.listChannelVideos({
      url: 'https://m.youtube.com/@SubxSynthetic/?si=share',
      tab: ChannelTab.CHANNEL_TAB_SHORTS,
      maxVideos: 100,
    });
    expect(second.cached).toBe(true);
    expect(youtube.count()).toBe(calls);
  });

  it('carries CHANNEL_NOT_FOUND with its reason, and INVALID_URL / INVALID_REQUEST for bad input', async () => {
    const list = (url: string, maxVideos = 10, tab: extractorV1.ChannelTab = ChannelTab.CHANNEL_TAB_VIDEOS) =>
      errorOf(client.listChannelVideos({ url, tab, maxVideos }));
    const terminated = await list(`https://www.youtube.com/channel/${channelIds.terminated}`);
    expect(terminated).toBeInstanceOf(AppError);
    expect(terminated).toMatchObject({ code: 'CHANNEL_NOT_FOUND', reason: 'terminated' });
    expect(await list('https://www.youtube.com/@nobody-has-this-handle')).toMatchObject({
      code: 'CHANNEL_NOT_FOUND',
      reason: 'not_found',
    });
    expect((await list('https://www.youtube.com/watch?v=F1xioXWb8CY'))?.code).toBe('INVALID_URL');
    expect((await list(channelUrls.synthetic, 0))?.code).toBe('INVALID_REQUEST');
    expect((await list(channelUrls.synthetic, 10, 99 as extractorV1.ChannelTab))?.code).toBe(
      'INVALID_REQUEST',
    );
  });

  it('stops reading pages once the caller’s deadline passes (no listing runs on for nobody)', async () => {
    youtube.setLatency(100, 'browse');
    try {
      const err = await errorOf(
        client.listChannelVideos(
          { url: channelUrls.synthetic, tab: ChannelTab.CHANNEL_TAB_VIDEOS, maxVideos: 1234 },
          { deadlineMs: 450 },
        ),
      );
      expect(err).toBeInstanceOf(AppError); // the client's own deadline answer (retryable)
      expect(err?.retryable).toBe(true);
      // the page in flight when the deadline passed may still answer; no page is asked after it
      await new Promise((r) => setTimeout(r, 250));
      const asked = youtube.count('browse');
      await new Promise((r) => setTimeout(r, 500));
      expect(youtube.count('browse')).toBe(asked);
      expect(asked).toBeLessThan(10);
    } finally {
      youtube.setLatency(0, 'browse');
    }
  });
});
