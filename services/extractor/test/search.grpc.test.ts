import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { extractorV1 } from '@subx/contracts';
import type { AppError } from '@subx/errors';
import { type GrpcClient } from '@subx/service-kit';
import { loadFixture, searchQueries, startFakeYouTube, type FakeYouTube } from '@subx/testing/fake-youtube';
import { parseSearchPage } from '@subx/youtube';
import { startTestExtractor, type TestExtractor } from './fixtures/extractor-service.ts';

/** Search and ListSearchVideos through a real gRPC client, against the fake's search recordings. */

const { SearchType } = extractorV1;
const recorded = (file: string) =>
  parseSearchPage(JSON.parse(loadFixture({ file: `newpipe/43f8e6e/search/${file}` }).body));

describe('extractor search over gRPC against the fake YouTube', () => {
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
  const ask = (over: Partial<extractorV1.SearchRequest>) =>
    client.search(
      extractorV1.SearchRequest.create({ query: 'test', type: SearchType.SEARCH_TYPE_VIDEO, ...over }),
    );

  it('a first page, its next page by the continuation, then both again from the cache', async () => {
    const first = await ask({});
    const page = recorded('all/generated_mock_2.json');
    expect(first.results.map((r) => r.id)).toEqual(page.results.map((r) => r.id));
    expect(first.results[0]).toMatchObject({
      kind: 'video',
      id: '6GDBMbMU0ew',
      channel: 'BackMarkers F1 Show',
      channelId: 'UC6agiNZlMdGE9yqtQT9n8aw',
      durationSeconds: 136,
      publishedText: '2 hours ago',
      viewCount: 1862n,
      isShort: false,
      isLive: false,
    });
    expect(first).toMatchObject({ correctedQuery: '', nextContinuation: page.nextToken, cached: false });
    const second = await ask({ continuation: first.nextContinuation });
    expect(second.results).toHaveLength(24);
    expect(second.nextContinuation).not.toBe('');
    expect(youtube.count('search')).toBe(2);
    expect(await ask({})).toMatchObject({ cached: true, nextContinuation: page.nextToken });
    expect((await ask({ continuation: first.nextContinuation })).cached).toBe(true);
    expect(youtube.count('search')).toBe(2);
  });

  it('cached_only answers from the cache or with nothing, never asking the platform', async () => {
    const miss = await ask({ query: searchQueries.sidemen, cachedOnly: true });
    expect(miss).toMatchObject({ results: [], cached: false, nextContinuation: '' });
    expect(youtube.count('search')).toBe(0);
    await ask({ query: searchQueries.sidemen });
    const hit = await ask({ query: searchQueries.sidemen, cachedOnly: true });
    expect(hit.cached).toBe(true);
    expect(hit.results).toHaveLength(20);
    expect(youtube.count('search')).toBe(1);
  });

  it('filters reach the platform as params; each filter set is its own cache entry', async () => {
    await ask({
      query: searchQueries.didYouMean,
      filters: { uploadDate: 'week', duration: '', sort: 'date', features: ['subtitles'] },
    });
    await ask({ query: searchQueries.didYouMean });
    const params = youtube.requests.map((r) => (r.body as { params?: string }).params);
    expect(params).toEqual(['CAISBggDEAEoAfABAQ%3D%3D', 'EgIQAfABAQ%3D%3D']);
  });

  it('kinds, corrections and marks', async () => {
    const channels = await ask({ type: SearchType.SEARCH_TYPE_CHANNEL });
    expect(channels.results[0]).toMatchObject({
      kind: 'channel',
      handle: 'tutorialismic',
      subscriberCount: 234000n,
    });
    const playlists = await ask({ type: SearchType.SEARCH_TYPE_PLAYLIST });
    expect(playlists.results[0]).toMatchObject({ kind: 'playlist', videoCount: 102n });
    const shorts = await ask({ query: searchQueries.shorts });
    expect(shorts.correctedQuery).toBe('shorts');
    expect(shorts.results.find((r) => r.id === 'VjwWKFXMgv8')).toMatchObject({
      isLive: true,
      durationSeconds: undefined,
    });
    expect(shorts.results.some((r) => r.isShort)).toBe(true);
  });

  it('bad input names its field', async () => {
    const cases: [Partial<extractorV1.SearchRequest>, string][] = [
      [{ query: '' }, 'q'],
      [{ query: 'x'.repeat(201) }, 'q'],
      [{ filters: { uploadDate: 'decade', duration: '', sort: '', features: [] } }, 'upload_date'],
      [{ filters: { uploadDate: '', duration: 'tiny', sort: '', features: [] } }, 'duration'],
      [{ filters: { uploadDate: '', duration: '', sort: 'rating', features: [] } }, 'sort'],
      [{ filters: { uploadDate: '', duration: '', sort: '', features: ['smell'] } }, 'features'],
      [{ continuation: 'EgNub3Q=' }, 'cursor'],
    ];
    for (const [over, field] of cases) {
      const err = await errorOf(ask(over));
      expect({ code: err?.code, field: err?.details?.field }).toEqual({ code: 'INVALID_REQUEST', field });
    }
  });

  it('ListSearchVideos: the first 30 videos of a search in order over two pages, then from the cache', async () => {
    const want = [
      ...recorded('videouploaderavatar/generated_mock_2.json').results,
      ...recorded('videouploaderavatar/generated_mock_3.json').results,
    ]
      .map((r) => r.id)
      .slice(0, 30);
    const listing = await client.listSearchVideos({ query: searchQueries.sidemen, maxVideos: 30 });
    expect(listing.videos.map((v) => v.id)).toEqual(want);
    expect(listing).toMatchObject({ hasMore: true, cached: false, correctedQuery: '' });
    expect(youtube.count('search')).toBe(2);
    expect((await client.listSearchVideos({ query: searchQueries.sidemen, maxVideos: 30 })).cached).toBe(
      true,
    );
    expect(youtube.count('search')).toBe(2);
    const err = await errorOf(client.listSearchVideos({ query: 'test', maxVideos: 0 }));
    expect(err?.code).toBe('INVALID_REQUEST');
  });
});
