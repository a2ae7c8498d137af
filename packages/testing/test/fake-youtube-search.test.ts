// The fake's search: recorded first pages by query and type, recorded continuations, no results.
import { describe, expect, it } from 'vitest';
import { loadFixture, searchQueries, searchTypeOf } from '@subx/testing/fake-youtube';
import { type Json, context, fake, post, useFakeYouTube } from './fake-youtube-support.ts';

useFakeYouTube();

const S = 'newpipe/43f8e6e/search/';
const recorded = (file: string): Json => JSON.parse(loadFixture({ file: S + file }).body) as Json;
const nextToken = (page: Json): string =>
  page.contents.twoColumnSearchResultsRenderer.primaryContents.sectionListRenderer.contents.at(-1)
    .continuationItemRenderer.continuationEndpoint.continuationCommand.token as string;
/** The answer without what the fake sets per caller (the visitor it names in responseContext). */
const content = (page: Json): Json => ({ ...page, responseContext: undefined });

describe('searchTypeOf', () => {
  it.each([
    ['8AEB', 'all'],
    ['', 'all'],
    ['EgIQAfABAQ%3D%3D', 'video'],
    ['EgIQAfABAQ==', 'video'],
    ['EgIQAvABAQ%3D%3D', 'channel'],
    ['EgIQA_ABAQ%3D%3D', 'playlist'],
    ['EgIQA/ABAQ==', 'playlist'],
    ['CAISAhAB8AEB', 'video'],
    ['not base64 at all!', 'all'],
  ])('%s → %s', (params, type) => {
    expect(searchTypeOf(params)).toBe(type);
  });
});

describe('search', () => {
  it('answers a recorded query and type with its recorded first page, then its recorded continuation', async () => {
    const first = await post('search', { context: context('WEB'), query: 'test', params: 'EgIQAvABAQ==' });
    expect(first.status).toBe(200);
    expect(content(first.json)).toEqual(content(recorded('channel/generated_mock_2.json')));
    const second = await post('search', { context: context('WEB'), continuation: nextToken(first.json) });
    expect(second.status).toBe(200);
    expect(content(second.json)).toEqual(content(recorded('channel/generated_mock_3.json')));
    expect(fake.count('search')).toBe(2);
  });

  it('a query recorded for all results only answers that page for any type; case and spaces do not matter', async () => {
    const all = recorded('all/generated_mock_2.json');
    for (const params of ['8AEB', 'EgIQAfABAQ%3D%3D', 'CAISAhAB8AEB']) {
      const res = await post('search', { context: context('WEB'), query: ' Test ', params });
      expect(content(res.json)).toEqual(content(all));
    }
  });

  it.each([
    [searchQueries.didYouMean, 'suggestion'],
    [searchQueries.shorts, 'shortformcontent'],
    [searchQueries.sidemen, 'videouploaderavatar'],
  ])('videos of %s come from the %s recording', async (query, folder) => {
    const res = await post('search', { context: context('WEB'), query, params: 'EgIQAfABAQ%3D%3D' });
    expect(content(res.json)).toEqual(content(recorded(`${folder}/generated_mock_2.json`)));
  });

  it('any other query: "No results found"; an unknown continuation: HTTP 400 INVALID_ARGUMENT', async () => {
    const none = await post('search', { context: context('WEB'), query: 'nothing recorded here' });
    expect(none.status).toBe(200);
    expect(JSON.stringify(none.json)).toContain('backgroundPromoRenderer');
    expect(none.json._synthetic).toMatch(/SYNTHETIC/);
    const bad = await post('search', { context: context('WEB'), continuation: 'EgNub3Q=' });
    expect(bad.status).toBe(400);
    expect(bad.json.error.status).toBe('INVALID_ARGUMENT');
  });
});
