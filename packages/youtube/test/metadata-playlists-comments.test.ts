import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import { generateComments, playlistIds, startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import { METADATA_FIELDS, commentsContinuation, playlistContinuation } from '../src/index.ts';
import {
  MODES,
  NOW,
  callLog,
  clientFor,
  errorOf,
  roundTrips,
  setup,
  timedFetch,
  type TimedCall,
} from './support.ts';

describe.each(MODES)('fake platform: %s', (mode) => {
  let fake: FakeYouTube;
  beforeAll(async () => {
    fake = await setup(mode);
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  describe('getMetadata', () => {
    it('returns the 6 always-present fields from the ladder /player and a masked WEB /player in parallel', async () => {
      const yt = clientFor(fake);
      const m = await yt.getMetadata(videoIds.manyManual, [
        'description',
        'tags',
        'categories',
        'view_count',
        'is_live',
        'was_live',
      ]);
      expect(m).toEqual({
        title: 'Sprite Fright - Blender Open Movie',
        channel: 'Blender Studio',
        channelId: 'UCz75RVbH8q2jdBJ4SnwuZZQ',
        duration: 630,
        uploadDate: '20211029',
        thumbnailUrl: expect.stringMatching(/^https:\/\/i\.ytimg\.com\/vi\/_cMxraX_5RE\//),
        description: expect.stringContaining('Blender'),
        tags: expect.arrayContaining(['blender']),
        categories: ['Film & Animation'],
        viewCount: 6530496,
        isLive: false,
        // a premiere has liveBroadcastDetails but is not live content
        wasLive: false,
      });
      expect(callLog(fake).sort()).toEqual(['player:VISIONOS', 'player:WEB:masked']);
    });

    it('costs one round trip', async () => {
      const timed: TimedCall[] = [];
      await clientFor(fake, {}, { fetch: timedFetch(timed) }).getMetadata(videoIds.manualAndAuto, [
        'like_count',
      ]);
      expect(timed).toHaveLength(3);
      expect(roundTrips(timed)).toBe(1);
    });

    it('fetches player and watch-next in parallel for likes, comment count and chapters', async () => {
      const m = await clientFor(fake).getMetadata(videoIds.chapters, [
        'like_count',
        'comment_count',
        'chapters',
      ]);
      expect(m.likeCount).toBe(73111);
      expect(m.commentCount).toBeGreaterThan(0);
      expect(m.chapters).toEqual([
        { title: 'Ein erstaunlich kontroverses Thema', startTime: 0 },
        { title: 'Was ist Vitamin D?', startTime: 164 },
        { title: 'Die Saisonalitätshypothese', startTime: 364 },
        { title: 'Klinische Studien zu Vitamin D', startTime: 498 },
        { title: 'Ab wann hat man Vitamin-D-Mangel?', startTime: 615 },
        { title: 'Vorsicht vor pauschalen Empfehlungen', startTime: 803 },
        { title: 'Keksempfehlungen', startTime: 981 },
      ]);
      // mobile recording without microformat: the upload date comes from watch-next's dateText
      expect(m.uploadDate).toMatch(/^\d{8}$/);
      expect(callLog(fake).sort()).toEqual(['next:WEB', 'player:VISIONOS', 'player:WEB:masked']);
    });

    it('reads the upload date from watch-next when no player answer has it, and only then', async () => {
      // Kn56bMZ9OE8: a mobile recording without microformat, and no masked WEB recording either
      const m = await clientFor(fake).getMetadata(videoIds.audioTracks, []);
      expect(m.uploadDate).toBe('20230320');
      expect(callLog(fake).sort()).toEqual(['next:WEB', 'player:VISIONOS', 'player:WEB:masked']);
      fake.reset();
      // the masked WEB answer dates it: no watch-next
      const dated = await clientFor(fake).getMetadata(videoIds.manyTracks, []);
      expect(dated.uploadDate).toMatch(/^\d{8}$/);
      expect(callLog(fake).sort()).toEqual(['player:VISIONOS', 'player:WEB:masked']);
    });

    it('reads live state', async () => {
      const live = await clientFor(fake).getMetadata(videoIds.liveNow, ['is_live', 'was_live']);
      expect(live).toMatchObject({ isLive: true, wasLive: false, uploadDate: '20220712' });
      fake.reset();
      const was = await clientFor(fake).getMetadata(videoIds.wasLive, ['is_live', 'was_live']);
      expect(was).toMatchObject({ isLive: false, wasLive: true, duration: 23169 });
      fake.reset();
      // a stream that ended and is still being processed is no longer live: it was
      const processing = await clientFor(fake).getMetadata(videoIds.postLive, ['is_live', 'was_live']);
      expect(processing).toMatchObject({ isLive: false, wasLive: true, duration: 5412 });
    });

    it('reports comments turned off as comment_count 0 and an empty description as ""', async () => {
      const m = await clientFor(fake).getMetadata(videoIds.commentsDisabled, ['comment_count', 'like_count']);
      expect(m).toMatchObject({ commentCount: 0, likeCount: 72 });
      fake.reset();
      const d = await clientFor(fake).getMetadata(videoIds.noDescription, ['description', 'categories']);
      expect(d).toMatchObject({
        description: '',
        categories: ['Music'],
        uploadDate: '20120521',
        channel: 'ChrisReaVideos',
      });
    });

    it('omits fields that were not asked for', async () => {
      const m = await clientFor(fake).getMetadata(videoIds.manualAndAuto, []);
      expect(Object.keys(m).sort()).toEqual([
        'channel',
        'channelId',
        'duration',
        'thumbnailUrl',
        'title',
        'uploadDate',
      ]);
      expect(METADATA_FIELDS).toHaveLength(9);
    });

    it('throws the playability error of an unavailable video', async () => {
      const err = await errorOf(clientFor(fake).getMetadata(videoIds.private, []));
      expect(err).toMatchObject({ code: 'VIDEO_UNAVAILABLE', reason: 'private' });
    });
  });

  describe('validate', () => {
    it('lists languages by kind (the tracks WEB hides), title and duration from one ladder request', async () => {
      const v = await clientFor(fake).validate(videoIds.manualAndAuto);
      expect(v).toEqual({
        valid: true,
        hasSubtitles: true,
        manualLanguages: ['en'],
        autoGeneratedLanguages: ['en'],
        title: 'The Tide Is Turning - Russian Civil War Fall 1919 I THE GREAT WAR 1919',
        duration: 1509,
      });
      expect(callLog(fake)).toEqual(['player:VISIONOS']);
    });

    it('lists gated tracks too (they exist, they are just harder to fetch)', async () => {
      const v = await clientFor(fake).validate(videoIds.poTokenOnWeb);
      expect(v.manualLanguages).toEqual(expect.arrayContaining(['en', 'de', 'ja']));
      expect(v.autoGeneratedLanguages).toEqual(['en']);
      expect(fake.count('player')).toBe(1);
    });

    it('says no subtitles for a playable video without captions', async () => {
      expect(await clientFor(fake).validate(videoIds.noCaptions)).toMatchObject({
        valid: true,
        hasSubtitles: false,
        manualLanguages: [],
        autoGeneratedLanguages: [],
      });
    });

    it('says captions are pending for a stream in processing or live now, and not otherwise', async () => {
      expect(await clientFor(fake).validate(videoIds.postLive)).toMatchObject({
        valid: true,
        hasSubtitles: false,
        captionsPending: 'post_live',
      });
      expect(await clientFor(fake).validate(videoIds.liveNow)).toMatchObject({
        valid: true,
        hasSubtitles: false,
        captionsPending: 'live',
      });
      expect((await clientFor(fake).validate(videoIds.noCaptions)).captionsPending).toBeUndefined();
      expect((await clientFor(fake).validate(videoIds.wasLive)).captionsPending).toBeUndefined();
    });

    it('answers valid: false with the error for missing and unavailable videos', async () => {
      const nf = await clientFor(fake).validate(videoIds.invalid);
      expect(nf.valid).toBe(false);
      expect(nf.error?.code).toBe('VIDEO_NOT_FOUND');
      const geo = await clientFor(fake).validate(videoIds.geoBlocked);
      expect(geo).toMatchObject({ valid: false, hasSubtitles: false });
      expect(geo.error?.reason).toBe('geo_blocked');
    });

    it('throws when the platform blocks us (that says nothing about the video)', async () => {
      const err = await errorOf(clientFor(fake).validate(videoIds.botCheck));
      expect(err.code).toBe('UPSTREAM_BLOCKED');
    });
  });

  describe('getPlaylist', () => {
    it('reads title, uploader, total and the first N ids of the Crash Course playlist, in order', async () => {
      const p = await clientFor(fake).getPlaylist(playlistIds.classic, 5);
      expect(p).toEqual({
        playlistId: playlistIds.classic,
        title: 'Anatomy & Physiology',
        uploader: 'CrashCourse',
        totalVideos: 49,
        videoIds: ['pVkUCrgQCCc', 'uBGl2BujkPQ', 'i5tR3csCWYo', 'lUe_RI_m-Vg', 'D-SzmURNBH0'],
      });
      if (mode === 'replay') expect(fake.count()).toBe(1);
      else {
        // today its first answer is header-only: the first continuation is built from the playlist id
        expect(fake.requests.map((r) => r.browseId ?? r.continuation)).toEqual([
          `VL${playlistIds.classic}`,
          playlistContinuation(playlistIds.classic),
        ]);
      }
    });

    it('an empty item list for a playlist that reports videos is UPSTREAM_ERROR, never an empty success', async () => {
      fake.failNext({ kind: 'emptyPlaylistPage' }, { endpoint: 'browse', times: 5 });
      const err = await errorOf(clientFor(fake).getPlaylist(playlistIds.synthetic, 10));
      expect(err).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
      expect(err.message).toContain('reports');
    });

    it('returns every id when N exceeds the playlist and does not follow shelf-level continuations', async () => {
      const p = await clientFor(fake).getPlaylist(playlistIds.small, 100);
      expect(p.videoIds).toHaveLength(17);
      expect(p.totalVideos).toBe(17);
      expect(p.title).toBe('Top 10 Copyright Free Music Tracks 2021');
      expect(fake.count()).toBe(1);
    });

    it('reads Shorts playlists (shortsLockupViewModel, playlistHeaderRenderer)', async () => {
      const p = await clientFor(fake).getPlaylist(playlistIds.shorts, 3);
      expect(p).toEqual({
        playlistId: playlistIds.shorts,
        title: 'Short videos',
        uploader: 'YouTube',
        totalVideos: 753,
        videoIds: ['Xn1RVBESPBE', 'kBaPztxfoZA', 'kouUUoORgpM'],
      });
    });

    it('follows continuations in order across both 2026 continuation shapes, 1 + ceil(n/100) requests', async () => {
      const p = await clientFor(fake).getPlaylist(playlistIds.synthetic, 230);
      expect(p.videoIds).toHaveLength(230);
      expect(p.videoIds[0]).toBe('synthv00001');
      expect(p.videoIds[100]).toBe('synthv00101');
      expect(p.videoIds[229]).toBe('synthv00230');
      expect(p).toMatchObject({
        title: 'Synthetic lockup playlist',
        uploader: 'Synthetic Channel',
        totalVideos: 250,
      });
      expect(fake.count('browse')).toBe(3);
      fake.reset();
      await clientFor(fake).getPlaylist(playlistIds.synthetic, 100);
      expect(fake.count('browse')).toBe(1);
    });

    it.each([playlistIds.notFound, playlistIds.unviewable, 'PLnothingRecordedHere'])(
      '%s → PLAYLIST_NOT_FOUND',
      async (id) => {
        const err = await errorOf(clientFor(fake).getPlaylist(id, 10));
        expect(err).toMatchObject({ code: 'PLAYLIST_NOT_FOUND', retryable: false });
      },
    );
  });

  describe('getComments', () => {
    it('reads the recorded page: parent then its replies, likes and relative times resolved', async () => {
      const r = await clientFor(fake).getComments({ videoId: videoIds.comments, max: 11, sort: 'relevance' });
      expect(r.commentsDisabled).toBe(false);
      expect(r.totalCount).toBe(21051);
      expect(r.comments).toHaveLength(11);
      expect(r.comments[0]).toEqual({
        id: 'UgwSOM0QHBLysE3vZE54AaABAg',
        author: '@kurzgesagt',
        text: 'The 12,022 Calendar is sold out check out more scienc-y products created with love here: https://kgs.link/shop-151',
        likes: 9800,
        publishedAt: Math.floor(NOW / 1000) - 4 * 365 * 86400,
        isReply: false,
      });
      for (const reply of r.comments.slice(1)) {
        expect(reply).toMatchObject({ isReply: true, parentId: 'UgwSOM0QHBLysE3vZE54AaABAg' });
        expect(reply.id.startsWith('UgwSOM0QHBLysE3vZE54AaABAg.')).toBe(true);
      }
      expect(r.comments[1]).toMatchObject({ author: '@andrefarfan4372', text: 'First', likes: 52 });
      // watch-next, comments page 1, the pinned thread's replies page; nothing prefetched beyond the budget
      expect(fake.requests.map((q) => q.endpoint)).toEqual(['next', 'next', 'next']);
    });

    it('downloads several pages with replies after their parents (relevance)', async () => {
      const expected = generateComments({
        videoId: videoIds.syntheticComments,
        topLevel: 45,
        perPage: 20,
        repliesEvery: 4,
        repliesPerThread: 3,
        replyPageSize: 2,
        inlineEvery: 10,
      });
      const r = await clientFor(fake).getComments({
        videoId: videoIds.syntheticComments,
        max: 2000,
        sort: 'relevance',
      });
      const flat = expected.threads.flatMap((t) => [t.id, ...t.replies.map((x) => x.id)]);
      expect(r.comments.map((c) => c.id)).toEqual(flat);
      expect(r.totalCount).toBe(1200);
      const third = r.comments.find((c) => c.id.endsWith('00003'));
      expect(third).toMatchObject({
        author: '@user3',
        likes: 999,
        isReply: false,
        publishedAt: Math.floor(NOW / 1000) - 86400,
      });
      const reply = r.comments.find((c) => c.id.endsWith('00004.r3'));
      expect(reply).toMatchObject({
        isReply: true,
        parentId: expected.threads[3]?.id,
        text: 'Reply 3 to comment 4 &amp; <b>not</b> markup',
      });
      const inline = r.comments.find((c) => c.id.endsWith('00010.r1'));
      expect(inline).toMatchObject({ isReply: true, parentId: expected.threads[9]?.id });
      // 1 watch-next + 3 pages + 2 reply pages for each of the 9 threads with continuation replies (4,8,12,...,44 minus 20, 40 inline)
      const withContinuation = expected.threads.filter((t) => t.replies.length > 0 && !t.inline).length;
      expect(fake.count('next')).toBe(1 + 3 + 2 * withContinuation);
    });

    it('sorts newest first with the sort-menu token from watch-next (no extra request)', async () => {
      const r = await clientFor(fake).getComments({
        videoId: videoIds.syntheticComments,
        max: 2,
        sort: 'time',
      });
      expect(r.comments.map((c) => c.author)).toEqual(['@user45', '@user44']);
      expect(fake.requests.map((q) => q.continuation ?? q.videoId)).toEqual([
        videoIds.syntheticComments,
        `synth-${videoIds.syntheticComments}-new-1`,
      ]);
    });

    it('stops at max, counting replies', async () => {
      const r = await clientFor(fake).getComments({
        videoId: videoIds.syntheticComments,
        max: 6,
        sort: 'relevance',
      });
      expect(r.comments.map((c) => c.id.replace(/^Ugsynth synthCmnts1/, ''))).toHaveLength(6);
      expect(r.comments.map((c) => c.isReply)).toEqual([false, false, false, false, true, true]);
    });

    it('builds the first comments continuation when watch-next has no comments entry at all', async () => {
      const r = await clientFor(fake).getComments({
        videoId: videoIds.commentsNoPanel,
        max: 5,
        sort: 'relevance',
      });
      expect(r.commentsDisabled).toBe(false);
      expect(r.comments).toHaveLength(5);
      expect(fake.requests[1]?.continuation).toBe(commentsContinuation(videoIds.commentsNoPanel));
    });

    it('asks an empty comments page once more; twice empty is UPSTREAM_ERROR, never "0 comments"', async () => {
      fake.failNext({ kind: 'emptyCommentsPage' }, { endpoint: 'next', times: 1 });
      // the first /next (watch-next) is not a continuation: the failure matches the first page
      const ok = await clientFor(fake).getComments({
        videoId: videoIds.syntheticComments,
        max: 3,
        sort: 'relevance',
      });
      expect(ok.comments).toHaveLength(3);
      fake.reset();
      fake.failNext({ kind: 'emptyCommentsPage' }, { endpoint: 'next', times: 2 });
      const err = await errorOf(
        clientFor(fake).getComments({ videoId: videoIds.syntheticComments, max: 3, sort: 'relevance' }),
      );
      expect(err).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
    });

    it('a later page that stays empty ends the listing as partial, so it is never cached as complete', async () => {
      const empty = {
        onResponseReceivedEndpoints: [{ appendContinuationItemsAction: { continuationItems: [] } }],
      };
      const cut = await startFakeYouTube({
        mode,
        routes: { continuations: { [`synth-${videoIds.syntheticComments}-top-2`]: { inline: empty } } },
      });
      try {
        const r = await clientFor(cut).getComments({
          videoId: videoIds.syntheticComments,
          max: 2000,
          sort: 'relevance',
        });
        expect(r.partial).toBe(true);
        expect(r.comments.filter((c) => !c.isReply)).toHaveLength(20);
        const page2 = cut.requests.filter(
          (q) => q.continuation === `synth-${videoIds.syntheticComments}-top-2`,
        );
        expect(page2).toHaveLength(2); // asked once more before giving up
      } finally {
        await cut.close();
      }
    });

    it('reports comments turned off without an error, after one request', async () => {
      for (const id of [videoIds.commentsDisabled, videoIds.autoOnly]) {
        fake.reset();
        const r = await clientFor(fake).getComments({ videoId: id, max: 100, sort: 'relevance' });
        expect(r).toEqual({ comments: [], commentsDisabled: true, totalCount: 0 });
        expect(fake.count()).toBe(1);
      }
    });

    it('a video without a watch-next page is VIDEO_NOT_FOUND', async () => {
      const err = await errorOf(
        clientFor(fake).getComments({ videoId: 'zzzzzzzzzzz', max: 10, sort: 'relevance' }),
      );
      expect(err.code).toBe('VIDEO_NOT_FOUND');
    });

    it('classifies an empty watch-next through the player, as extraction does', async () => {
      const priv = await errorOf(
        clientFor(fake).getComments({ videoId: videoIds.private, max: 10, sort: 'relevance' }),
      );
      expect([priv.code, priv.reason]).toEqual(['VIDEO_UNAVAILABLE', 'private']);
      const blocked = await errorOf(
        clientFor(fake).getComments({ videoId: videoIds.botCheck, max: 10, sort: 'relevance' }),
      );
      expect([blocked.code, blocked.retryable]).toEqual(['UPSTREAM_BLOCKED', true]);
    });
  });
});
