import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import {
  ageRestrictedChannelVideos,
  channelIds,
  channelUrls,
  longPlaylistId,
  playlistIds,
  startFakeYouTube,
  syntheticChannelVideoId,
} from '@subx/testing/fake-youtube';
import { LISTING_MAX_VIDEOS, playlistContinuation } from '../src/index.ts';
import { MODES, clientFor, errorOf, setup } from './support.ts';

/** The channel and long-playlist listings of bulk jobs, through the real client against the fake. */

const HUGE = 'PLWwAypAcFRgKAIIFqBr9oy-ZYZnixa_Fj';

describe.each(MODES)('channels and long listings, fake platform: %s', (mode) => {
  let fake: FakeYouTube;
  beforeAll(async () => {
    fake = await setup(mode);
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  /** The fake's request log as `endpoint browseId|continuation-prefix|url`. */
  const log = () =>
    fake.requests.map((r) => {
      const body = (r.body ?? {}) as { url?: string; params?: string };
      if (r.endpoint === 'resolve_url') return `resolve_url ${body.url}`;
      return r.continuation ? `browse continuation` : `browse ${r.browseId} ${body.params ?? ''}`.trim();
    });

  describe('listChannel', () => {
    it('/user/ URL: resolve_url, the videos tab, then its recorded continuation, 45 in order', async () => {
      const c = await clientFor(fake).listChannel({ url: `${channelUrls.creativeCommons}/videos`, max: 45 });
      expect(c).toMatchObject({
        channelId: channelIds.creativeCommons,
        title: 'Creative Commons',
        handle: 'creativecommons',
        tab: 'videos',
        hasMore: true,
      });
      expect(c.videos).toHaveLength(45);
      expect(c.videos[0]).toMatchObject({ videoId: 'BD-LB23rRBE', durationSeconds: 4054, viewCount: 28 });
      expect(c.videos[30]).toMatchObject({ videoId: 'CIFHx7_z3Vc', publishedText: '1 year ago' });
      expect(log()).toEqual([
        'resolve_url https://www.youtube.com/user/creativecommons',
        `browse ${channelIds.creativeCommons} EgZ2aWRlb3PyBgQKAjoA`,
        'browse continuation',
      ]);
      expect(fake.requests.every((r) => r.clientName === 'WEB')).toBe(true);
    });

    it('/c/ URL, streams tab: every continuation to the end of the tab (57), nothing more to come', async () => {
      const c = await clientFor(fake).listChannel({
        url: channelUrls.jeffGeerling,
        tab: 'streams',
        max: 500,
      });
      expect(c).toMatchObject({ channelId: channelIds.jeffGeerling, handle: 'JeffGeerling', hasMore: false });
      expect(c.videos).toHaveLength(57);
      expect(new Set(c.videos.map((v) => v.videoId)).size).toBe(57);
      expect(c.videos.every((v) => v.publishedText?.startsWith('Streamed'))).toBe(true);
      expect(fake.count('browse')).toBe(2);
    });

    it('/channel/ URL with the tab in its path: no resolve_url; the Shorts tab past its first page', async () => {
      const c = await clientFor(fake).listChannel({
        url: `https://m.youtube.com/channel/${channelIds.doobydobap}/shorts?si=x`,
        max: 60,
      });
      expect(c).toMatchObject({ tab: 'shorts', title: 'Doobydobap', hasMore: true });
      expect(c.videos).toHaveLength(60);
      expect(c.videos[48]?.videoId).toBe('R8ydpPnC6vI');
      expect(fake.count('resolve_url')).toBe(0);
    });

    it('an age-gated channel is listed through its uploads playlist (UULF…), in order, every page', async () => {
      const uploads = `UULF${channelIds.ageRestricted.slice(2)}`;
      const c = await clientFor(fake).listChannel({ url: channelUrls.ageRestricted, max: 120 });
      expect(c).toMatchObject({
        channelId: channelIds.ageRestricted,
        title: 'Subx Age Restricted',
        tab: 'videos',
        hasMore: true,
      });
      expect(c.videos.map((v) => v.videoId)).toEqual(
        Array.from({ length: 120 }, (_, i) => `synthv${String(i + 1).padStart(5, '0')}`),
      );
      expect(log()).toEqual([
        'resolve_url https://www.youtube.com/@SubxAgeRestricted',
        `browse ${channelIds.ageRestricted} EgZ2aWRlb3PyBgQKAjoA`,
        `browse VL${uploads}`,
        'browse continuation',
      ]);
      const all = await clientFor(fake).listChannel({ url: channelUrls.ageRestricted, max: 1000 });
      expect(all.videos).toHaveLength(ageRestrictedChannelVideos);
      expect(all.hasMore).toBe(false);
    });

    it('an age-gated channel whose uploads of a kind cannot be listed stays age_restricted', async () => {
      const error = await errorOf(
        clientFor(fake).listChannel({ url: channelUrls.ageRestricted, tab: 'shorts', max: 10 }),
      );
      expect(error).toMatchObject({ code: 'CHANNEL_NOT_FOUND', reason: 'age_restricted' });
    });

    it('a tab the channel does not have lists nothing (the platform answers the home tab)', async () => {
      const c = await clientFor(fake).listChannel({
        url: `https://www.youtube.com/channel/${channelIds.kurzgesagt}`,
        tab: 'streams',
        max: 10,
      });
      expect(c).toEqual({
        channelId: channelIds.kurzgesagt,
        title: 'Kurzgesagt – In a Nutshell',
        handle: 'kurzgesagt',
        tab: 'streams',
        videos: [],
        hasMore: false,
      });
      const synthetic = await clientFor(fake).listChannel({
        url: channelUrls.synthetic,
        tab: 'streams',
        max: 10,
      });
      expect(synthetic).toMatchObject({ title: 'Subx Synthetic Channel', videos: [], hasMore: false });
    });

    it('a 1,234-video channel by @handle: 1,000 in order over 34 pages; then all of it', async () => {
      const yt = clientFor(fake);
      const c = await yt.listChannel({ url: channelUrls.synthetic, max: 1000 });
      expect(c).toMatchObject({ channelId: channelIds.synthetic, handle: 'SubxSynthetic', hasMore: true });
      expect(c.videos.map((v) => v.videoId)).toEqual(
        Array.from({ length: 1000 }, (_, i) => syntheticChannelVideoId('videos', i + 1)),
      );
      expect(c.videos[0]).toMatchObject({
        title: 'Synthetic video 1',
        viewCount: 10,
        publishedText: '1 days ago',
      });
      expect(fake.count('browse')).toBe(34);
      fake.reset();
      const all = await yt.listChannel({ url: channelUrls.synthetic, max: LISTING_MAX_VIDEOS });
      expect(all.videos).toHaveLength(1234);
      expect(all.hasMore).toBe(false);
      expect(fake.count('browse')).toBe(42);
    });

    it.each([
      ['https://www.youtube.com/@nobody-has-this-handle', 'not_found'],
      [`https://www.youtube.com/channel/${channelIds.doesNotExist}`, 'not_found'],
      [`https://www.youtube.com/channel/UCunknownToTheFakeAtAll0`, 'not_found'],
      [`https://www.youtube.com/channel/${channelIds.refused}`, 'not_found'],
      [`https://www.youtube.com/channel/${channelIds.removed}`, 'terminated'],
      [`https://www.youtube.com/channel/${channelIds.terminated}`, 'terminated'],
      [`https://www.youtube.com/channel/${channelIds.terminatedCopyright}/videos`, 'terminated'],
    ])('%s → CHANNEL_NOT_FOUND (%s)', async (url, reason) => {
      const err = await errorOf(clientFor(fake).listChannel({ url, max: 10 }));
      expect(err).toMatchObject({ code: 'CHANNEL_NOT_FOUND', reason, retryable: false });
    });

    it('refuses what is not a channel URL, and a max out of bounds, before any request', async () => {
      const yt = clientFor(fake);
      expect(
        await errorOf(yt.listChannel({ url: 'https://www.youtube.com/watch?v=F1xioXWb8CY', max: 5 })),
      ).toMatchObject({ code: 'INVALID_URL' });
      expect(await errorOf(yt.listChannel({ url: channelUrls.synthetic, max: 0 }))).toMatchObject({
        code: 'INVALID_REQUEST',
      });
      expect(
        await errorOf(yt.listChannel({ url: channelUrls.synthetic, max: LISTING_MAX_VIDEOS + 1 })),
      ).toMatchObject({ code: 'INVALID_REQUEST' });
      expect(fake.count()).toBe(0);
    });

    it('platform trouble on a continuation is a retryable error, never a shorter list', async () => {
      // the resolve and the first page answer; every continuation answers 503
      const failing = (input: string, init: RequestInit & { dispatcher?: unknown }) =>
        typeof init.body === 'string' && init.body.includes('"continuation"')
          ? Promise.resolve(new Response('{}', { status: 503 }))
          : fetch(input, init as RequestInit);
      const yt = clientFor(fake, { YOUTUBE_RETRIES: '1' }, { fetch: failing, sleep: async () => undefined });
      const err = await errorOf(yt.listChannel({ url: channelUrls.synthetic, max: 100 }));
      expect(err.retryable).toBe(true);
      expect(log()).toEqual([
        'resolve_url https://www.youtube.com/@SubxSynthetic',
        `browse ${channelIds.synthetic} EgZ2aWRlb3PyBgQKAjoA`,
      ]);
    });
  });

  describe('listPlaylist (past the public route’s 25)', () => {
    it('a recorded playlist continuation: the Crash Course playlist, all 49 ids', async () => {
      const p = await clientFor(fake).listPlaylist(playlistIds.classic, { max: 100 });
      expect(p).toMatchObject({ title: 'Anatomy & Physiology', uploader: 'CrashCourse', totalVideos: 49 });
      expect(p.videoIds).toHaveLength(49);
      expect(p.videoIds.slice(0, 2)).toEqual(['pVkUCrgQCCc', 'uBGl2BujkPQ']);
      expect(p.hasMore).toBe(false);
    });

    it('the recorded 4,999-video playlist: header-only, the built continuation answers the recorded 100', async () => {
      const huge = await startFakeYouTube({
        mode,
        routes: {
          playlists: {
            [HUGE]: { file: 'newpipe/43f8e6e/youtubeplaylistextractor/hugeplaylist/generated_mock_2.json' },
          },
        },
        playlistShapes: { [HUGE]: 'classic' },
      });
      try {
        const p = await clientFor(huge).listPlaylist(HUGE, { max: 100 });
        expect(p.totalVideos).toBe(4999);
        expect(p.videoIds).toHaveLength(100);
        expect(new Set(p.videoIds).size).toBe(100);
        expect(p.hasMore).toBe(true);
        expect(huge.requests.map((r) => r.browseId ?? r.continuation)).toEqual([
          `VL${HUGE}`,
          playlistContinuation(HUGE),
        ]);
        // page 2 was not recorded: the fake refuses its token, and the listing fails rather than stop short
        const err = await errorOf(clientFor(huge).listPlaylist(HUGE, { max: 150 }));
        expect(err).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
      } finally {
        await huge.close();
      }
    });

    it('the 1,500-video synthetic playlist: 1,200 ids in order over 12 pages', async () => {
      const p = await clientFor(fake).listPlaylist(longPlaylistId, { max: 1200 });
      expect(p.videoIds).toHaveLength(1200);
      expect(p.videoIds[0]).toBe('synthv00001');
      expect(p.videoIds[1199]).toBe('synthv01200');
      expect(p).toMatchObject({ totalVideos: 1500, hasMore: true, title: 'Synthetic long playlist' });
      expect(fake.count('browse')).toBe(12);
    });

    it('unknown playlists are PLAYLIST_NOT_FOUND, as on the public route', async () => {
      const err = await errorOf(clientFor(fake).listPlaylist(playlistIds.notFound, { max: 100 }));
      expect(err).toMatchObject({ code: 'PLAYLIST_NOT_FOUND' });
    });
  });
});
