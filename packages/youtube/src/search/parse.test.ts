import { readFileSync } from 'node:fs';
import { fixturesDir, loadFixture } from '@subx/testing/fake-youtube';
import { describe, expect, it } from 'vitest';
import { searchParams } from './params.ts';
import { parseSearchPage, searchItem } from './parse.ts';

/** The parser over the search recordings copied into fixtures-recorded (MANIFEST "Search results"). */
const S = 'newpipe/43f8e6e/search/';
const json = (file: string): unknown => JSON.parse(loadFixture({ file: S + file }).body);
/** The body the recording's own request sent (its query and params, or its continuation token). */
const sent = (file: string): Record<string, string> =>
  JSON.parse(
    Buffer.from(
      (JSON.parse(readFileSync(fixturesDir() + S + file, 'utf8')) as { request: { dataToSend: number[] } })
        .request.dataToSend,
    ).toString('utf8'),
  ) as Record<string, string>;

/** The ids of the renderers sitting directly in the first page's item sections (not inside shelves). */
function directIds(file: string, renderer: string, idKey: string): string[] {
  const page = json(file) as {
    contents: {
      twoColumnSearchResultsRenderer: {
        primaryContents: {
          sectionListRenderer: { contents: { itemSectionRenderer?: { contents: object[] } }[] };
        };
      };
    };
  };
  return page.contents.twoColumnSearchResultsRenderer.primaryContents.sectionListRenderer.contents
    .flatMap((s) => s.itemSectionRenderer?.contents ?? [])
    .map((item) => (item as Record<string, Record<string, string> | undefined>)[renderer]?.[idKey])
    .filter((id): id is string => id !== undefined);
}

describe('searchParams', () => {
  it.each([
    ['all/generated_mock_2.json', 'all'],
    ['channel/generated_mock_2.json', 'channel'],
    ['playlists/generated_mock_2.json', 'playlist'],
    ['suggestion/generated_mock_2.json', 'video'],
  ] as const)('reproduces the params the recording %s sent for type %s, byte for byte', (file, type) => {
    expect(searchParams({ type })).toBe(sent(file).params);
  });

  it('puts sort in field 1 and upload date, type, duration and features inside field 2', () => {
    const bytes = (p: string) => Buffer.from(decodeURIComponent(p), 'base64url').toString('hex');
    // yt-dlp's "videos, newest first" value
    expect(searchParams({ type: 'video', sort: 'date' })).toBe('CAISAhAB8AEB');
    // {2: {1: 3 (week), 2: 1 (video), 3: 2 (long), 4: 1 (hd), 5: 1 (subtitles)}, 30: 1}
    expect(
      bytes(
        searchParams({ type: 'video', uploadDate: 'week', duration: 'long', features: ['subtitles', 'hd'] }),
      ),
    ).toBe('120a08031001180220012801f00101');
    // {1: 3 (views), 2: {1: 1 (hour), 3: 3 (4-20 min), 26: 1 (vr180)}, 30: 1} for all types
    expect(
      bytes(
        searchParams({
          type: 'all',
          sort: 'views',
          uploadDate: 'hour',
          duration: 'medium',
          features: ['vr180'],
        }),
      ),
    ).toBe('0803120708011803d00101f00101');
    // a repeated feature is set once; relevance is the default and left out
    expect(searchParams({ type: 'video', sort: 'relevance', features: ['subtitles', 'subtitles'] })).toBe(
      searchParams({ type: 'video', features: ['subtitles'] }),
    );
  });
});

describe('parseSearchPage over the recorded first pages', () => {
  it('all results for "test": the 20 videos of the item section in order, shelves left out, the next token', () => {
    const page = parseSearchPage(json('all/generated_mock_2.json'));
    expect(page.results.map((r) => r.id)).toEqual(
      directIds('all/generated_mock_2.json', 'videoRenderer', 'videoId'),
    );
    expect(page.results).toHaveLength(20);
    // "Popular in Lyon" and "Channels new to you" shelves hold videoRenderers too: not results
    expect(page.results.map((r) => r.id)).not.toContain('qkyNzIZa4uc');
    expect(page.results[0]).toEqual({
      kind: 'video',
      id: '6GDBMbMU0ew',
      title: 'FIRST FOOTAGE of the 2026 F1 Cars at Barcelona Shakedown Test!',
      channel: 'BackMarkers F1 Show',
      channelId: 'UC6agiNZlMdGE9yqtQT9n8aw',
      durationSeconds: 136,
      publishedText: '2 hours ago',
      viewCount: 1862,
      thumbnail: expect.stringMatching(/^https:\/\/i\.ytimg\.com\/vi\/6GDBMbMU0ew\/hq720\.jpg\?/) as unknown,
    });
    expect(page.results.find((r) => r.id === '58ObmKvWkCM')).toMatchObject({
      isShort: true,
      durationSeconds: 56,
    });
    expect(page.correctedQuery).toBeUndefined();
    expect(page.nextToken).toBe(sent('all/generated_mock_3.json').continuation);
  });

  it('channels for "test": channelRenderer with its handle and subscribers', () => {
    const page = parseSearchPage(json('channel/generated_mock_2.json'));
    expect(page.results).toHaveLength(20);
    expect(page.results.every((r) => r.kind === 'channel' && r.channelId === r.id)).toBe(true);
    expect(page.results[0]).toEqual({
      kind: 'channel',
      id: 'UCZRcA_nO3Kt-SOml2mY8D9g',
      title: 'test',
      channel: 'test',
      channelId: 'UCZRcA_nO3Kt-SOml2mY8D9g',
      thumbnail: expect.stringMatching(/^https:\/\/yt3\.ggpht\.com\//) as unknown,
      handle: 'tutorialismic',
      subscriberCount: 234_000,
    });
    expect(page.nextToken).toBe(sent('channel/generated_mock_3.json').continuation);
  });

  it('playlists for "test": lockupViewModel with the owner, the video count and "Updated …"', () => {
    const page = parseSearchPage(json('playlists/generated_mock_2.json'));
    expect(page.results).toHaveLength(20);
    expect(page.results[0]).toEqual({
      kind: 'playlist',
      id: 'PLAD454F0807B6CB80',
      title: 'Tests du grenier',
      channel: 'Joueur Du Grenier',
      channelId: 'UC_yP2DpIgs5Y1uWC0T03Chw',
      thumbnail: expect.stringMatching(/^https:\/\/i\.ytimg\.com\/vi\/Zw6s3g1VpUc\//) as unknown,
      videoCount: 102,
      publishedText: 'Updated yesterday',
    });
    expect(page.results.every((r) => r.kind === 'playlist' && r.videoCount !== undefined)).toBe(true);
  });

  it('"on board ing": the "did you mean" correction, and the page\'s results', () => {
    const page = parseSearchPage(json('suggestion/generated_mock_2.json'));
    expect(page.correctedQuery).toBe('on boarding');
    expect(page.results).toHaveLength(20);
    expect(page.results[0]?.title).toBe('Boarding Spirit of Tasmania in Geelong');
  });

  it('"#shorts": "including results for" shorts; Shorts and live streams marked', () => {
    const page = parseSearchPage(json('shortformcontent/generated_mock_2.json'));
    expect(page.correctedQuery).toBe('shorts');
    const short = page.results.find((r) => r.id === 'JrRC57hrgs8');
    expect(short).toMatchObject({ isShort: true, durationSeconds: 13, viewCount: 2_571_811 });
    const live = page.results.find((r) => r.id === 'VjwWKFXMgv8');
    expect(live).toMatchObject({ kind: 'video', isLive: true });
    expect(live).not.toHaveProperty('durationSeconds');
    expect(live).not.toHaveProperty('viewCount');
  });

  it('a video by two collaborating channels names the first one', () => {
    const page = parseSearchPage(json('multipleuploader/generated_mock_2.json'));
    expect(page.results).toEqual([
      expect.objectContaining({
        id: 'Nxk6aRHi664',
        channel: 'Le Vortex - ARTE',
        channelId: expect.stringMatching(/^UC/) as unknown,
      }),
    ]);
  });

  it('a crisis-resources panel is no result; the videos after it are', () => {
    const page = parseSearchPage(json('crisisresources/generated_mock_2.json'));
    expect(page.results.map((r) => r.id)).toEqual(
      directIds('crisisresources/generated_mock_2.json', 'videoRenderer', 'videoId'),
    );
    expect(page.results.length).toBeGreaterThan(0);
  });
});

describe('parseSearchPage over the recorded continuations', () => {
  it.each([
    ['all/generated_mock_3.json', 25],
    ['channel/generated_mock_3.json', 20],
    ['playlists/generated_mock_3.json', 25],
    ['shortformcontent/generated_mock_3.json', 20],
    ['videouploaderavatar/generated_mock_3.json', 20],
  ])('%s: %i results and a next token', (file, n) => {
    const page = parseSearchPage(json(file));
    expect(page.results).toHaveLength(n);
    expect(page.nextToken).toMatch(/^E/);
  });

  it('"No more results": nothing, and no next token', () => {
    expect(parseSearchPage(json('randomquerynomorepages/generated_mock_3.json'))).toEqual({ results: [] });
  });

  it('a continuation mixing kinds keeps them in order (a channel among the videos of "test")', () => {
    const kinds = parseSearchPage(json('all/generated_mock_3.json')).results.map((r) => r.kind);
    expect(kinds.filter((k) => k === 'channel')).toHaveLength(1);
    expect(kinds.indexOf('channel')).toBe(13);
  });
});

describe('searchItem', () => {
  it('skips shelves, messages and unknown renderers', () => {
    expect(searchItem({ shelfRenderer: { title: { simpleText: 'Popular' } } })).toBeUndefined();
    expect(searchItem({ messageRenderer: { text: { simpleText: 'No more results' } } })).toBeUndefined();
    expect(
      searchItem({ lockupViewModel: { contentType: 'LOCKUP_CONTENT_TYPE_CHANNEL', contentId: 'x' } }),
    ).toBeUndefined();
    expect(searchItem('x')).toBeUndefined();
  });

  it('reads an upcoming premiere and a 2025 video lockup', () => {
    expect(
      searchItem({
        videoRenderer: { videoId: 'abcdefghijk', title: { runs: [{ text: 'Soon' }] }, upcomingEventData: {} },
      }),
    ).toEqual({ kind: 'video', id: 'abcdefghijk', title: 'Soon', isUpcoming: true });
    expect(
      searchItem({
        lockupViewModel: {
          contentType: 'LOCKUP_CONTENT_TYPE_VIDEO',
          contentId: 'abcdefghijk',
          contentImage: {
            thumbnailViewModel: {
              image: { sources: [{ url: 'https://i.ytimg.com/vi/abcdefghijk/hq.jpg', width: 480 }] },
              overlays: [
                {
                  thumbnailBottomOverlayViewModel: {
                    badges: [{ thumbnailBadgeViewModel: { text: '4:05' } }],
                  },
                },
              ],
            },
          },
          metadata: {
            lockupMetadataViewModel: {
              title: { content: 'A lockup' },
              metadata: {
                contentMetadataViewModel: {
                  metadataRows: [
                    {
                      metadataParts: [
                        {
                          text: {
                            content: 'Some Channel',
                            commandRuns: [
                              {
                                onTap: {
                                  innertubeCommand: {
                                    browseEndpoint: { browseId: 'UCsomeChannel000000000A' },
                                  },
                                },
                              },
                            ],
                          },
                        },
                      ],
                    },
                    {
                      metadataParts: [
                        { text: { content: '12K views' } },
                        { text: { content: '3 days ago' } },
                      ],
                    },
                  ],
                },
              },
            },
          },
        },
      }),
    ).toEqual({
      kind: 'video',
      id: 'abcdefghijk',
      title: 'A lockup',
      channel: 'Some Channel',
      channelId: 'UCsomeChannel000000000A',
      thumbnail: 'https://i.ytimg.com/vi/abcdefghijk/hq.jpg',
      durationSeconds: 245,
      viewCount: 12_000,
      publishedText: '3 days ago',
    });
  });
});
