import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadFixture, searchQueries, type FakeYouTube } from '@subx/testing/fake-youtube';
import { parseSearchPage } from '../src/index.ts';
import { MODES, clientFor, errorOf, setup } from './support.ts';

/** Search through the real client against the fake, which answers from the search recordings. */

const S = 'newpipe/43f8e6e/search/';
const recordedPage = (file: string) => parseSearchPage(JSON.parse(loadFixture({ file: S + file }).body));

describe.each(MODES)('search, fake platform: %s', (mode) => {
  let fake: FakeYouTube;
  beforeAll(async () => {
    fake = await setup(mode);
  });
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  const sent = () =>
    fake.requests
      .filter((r) => r.endpoint === 'search')
      .map((r) => {
        const { context: _context, ...body } = r.body as Record<string, unknown>;
        return { client: r.clientName, ...body } as Record<string, unknown>;
      });

  it('videos of "test": the first page\'s videos in order with a token, then the next page\'s videos', async () => {
    const client = clientFor(fake);
    const first = await client.search({ query: 'test', type: 'video' });
    const recorded = recordedPage('all/generated_mock_2.json');
    expect(first.results.map((r) => r.id)).toEqual(recorded.results.map((r) => r.id));
    expect(first.results).toHaveLength(20);
    expect(first.nextToken).toBe(recorded.nextToken);
    const second = await client.search({
      query: 'test',
      type: 'video',
      continuation: first.nextToken as string,
    });
    // the recorded continuation holds 24 videos and a channel: the channel is not a video
    expect(second.results).toHaveLength(24);
    expect(second.results.every((r) => r.kind === 'video')).toBe(true);
    expect(sent()).toEqual([
      { client: 'WEB', query: 'test', params: 'EgIQAfABAQ%3D%3D' },
      { client: 'WEB', continuation: first.nextToken },
    ]);
    await client.close();
  });

  it('all results keep every kind; channels and playlists come from their recordings', async () => {
    const client = clientFor(fake);
    const page2 = await client.search({
      query: 'test',
      type: 'all',
      continuation: recordedPage('all/generated_mock_2.json').nextToken as string,
    });
    expect(page2.results.filter((r) => r.kind === 'channel')).toHaveLength(1);
    const channels = await client.search({ query: 'test', type: 'channel' });
    expect(channels.results.map((r) => r.kind)).toEqual(Array(20).fill('channel'));
    const playlists = await client.search({ query: 'test', type: 'playlist', sort: 'date' });
    expect(playlists.results[0]).toMatchObject({
      kind: 'playlist',
      id: 'PLAD454F0807B6CB80',
      videoCount: 102,
    });
    expect(sent().map((b) => b.params)).toEqual([undefined, 'EgIQAvABAQ%3D%3D', 'CAISAhAD8AEB']);
    await client.close();
  });

  it('a corrected query says so', async () => {
    const client = clientFor(fake);
    expect((await client.search({ query: searchQueries.didYouMean, type: 'video' })).correctedQuery).toBe(
      'on boarding',
    );
    const shorts = await client.search({ query: searchQueries.shorts, type: 'video' });
    expect(shorts.correctedQuery).toBe('shorts');
    expect(shorts.results.some((r) => r.isShort)).toBe(true);
    expect(shorts.results.some((r) => r.isLive)).toBe(true);
    await client.close();
  });

  it('no results; a cursor the platform refuses is INVALID_REQUEST naming cursor; a bad query names q', async () => {
    const client = clientFor(fake);
    expect(await client.search({ query: 'nothing recorded here', type: 'video' })).toEqual({ results: [] });
    const bad = await errorOf(client.search({ query: 'test', type: 'video', continuation: 'EgNub3Q=' }));
    expect(bad).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'cursor' } });
    expect(fake.count('search')).toBe(2); // a refused token is not retried
    for (const query of ['', '   ', 'x'.repeat(201)])
      expect(await errorOf(client.search({ query, type: 'video' }))).toMatchObject({
        code: 'INVALID_REQUEST',
        details: { field: 'q' },
      });
    await client.close();
  });

  it('searchVideos: the first 30 videos in order over two pages; fewer when the search ends', async () => {
    const client = clientFor(fake);
    const first = recordedPage('videouploaderavatar/generated_mock_2.json').results.map((r) => r.id);
    const next = recordedPage('videouploaderavatar/generated_mock_3.json').results.map((r) => r.id);
    const found = await client.searchVideos({ query: searchQueries.sidemen, max: 30 });
    expect(found.videos.map((v) => v.id)).toEqual([...first, ...next].slice(0, 30));
    expect(found.hasMore).toBe(true);
    expect(fake.count('search')).toBe(2);
    fake.reset();
    const few = await client.searchVideos({ query: searchQueries.noMorePages, max: 30 });
    expect(few.videos.map((v) => v.kind)).toEqual(['video']);
    expect(few.hasMore).toBe(false);
    await client.close();
  });
});
