import { readFileSync } from 'node:fs';
import { fixturesDir, loadFixture } from '@subx/testing/fake-youtube';
import { describe, expect, it } from 'vitest';
import {
  TAB_PARAMS,
  clockSeconds,
  itemVideo,
  parseChannelContinuation,
  parseChannelPage,
  parseResolveUrl,
} from './parse.ts';

/** The parsers over every channel recording copied into fixtures-recorded (MANIFEST "Channel pages and tabs"). */
const TAB = 'newpipe/43f8e6e/youtubechanneltabextractor/';
const CH = 'newpipe/43f8e6e/youtubechannelextractor/';
const json = (file: string): unknown => JSON.parse(loadFixture({ file }).body);
/** The body the recording's own request sent (its continuation token, its URL, its browse params). */
const sent = (file: string): Record<string, string> =>
  JSON.parse(
    Buffer.from(
      (JSON.parse(readFileSync(fixturesDir() + file, 'utf8')) as { request: { dataToSend: number[] } })
        .request.dataToSend,
    ).toString('utf8'),
  ) as Record<string, string>;

describe('parseResolveUrl over the recorded navigation/resolve_url answers', () => {
  it.each([
    [
      `${TAB}videos/generated_mock_2.json`,
      'https://www.youtube.com/user/creativecommons',
      'UCTwECeGqMZee77BjdoYtI2Q',
    ],
    [
      `${TAB}livestreams/generated_mock_2.json`,
      'https://www.youtube.com/c/JeffGeerling',
      'UCR-DXc1voovS8nhAvccRZhg',
    ],
    [
      `${CH}captaindisillusion/generated_mock_2.json`,
      'https://www.youtube.com/user/CaptainDisillusion',
      'UCEOXxzW2vU0P-0THehuIIeg',
    ],
    [`${CH}vsauce/generated_mock_2.json`, 'https://www.youtube.com/user/Vsauce', 'UC6nSFpj9HTCZ5t-N3Rm3-HA'],
  ])('%s (%s) → %s', (file, url, channelId) => {
    expect(sent(file).url).toBe(url);
    expect(parseResolveUrl(json(file))).toEqual({ pageType: 'WEB_PAGE_TYPE_CHANNEL', channelId });
  });

  it('an unknown page type pointing elsewhere is followed; a video or a non-UC browse id is not a channel', () => {
    const endpoint = (webPageType: string, extra: Record<string, unknown>) => ({
      endpoint: { commandMetadata: { webCommandMetadata: { webPageType } }, ...extra },
    });
    expect(
      parseResolveUrl(
        endpoint('WEB_PAGE_TYPE_UNKNOWN', { urlEndpoint: { url: 'https://www.youtube.com/thedailyshow' } }),
      ),
    ).toEqual({ pageType: 'WEB_PAGE_TYPE_UNKNOWN', followUrl: 'https://www.youtube.com/thedailyshow' });
    expect(
      parseResolveUrl(endpoint('WEB_PAGE_TYPE_WATCH', { watchEndpoint: { videoId: 'F1xioXWb8CY' } })),
    ).toEqual({
      pageType: 'WEB_PAGE_TYPE_WATCH',
    });
    expect(
      parseResolveUrl(endpoint('WEB_PAGE_TYPE_BROWSE', { browseEndpoint: { browseId: 'FEtrending' } })),
    ).toEqual({
      pageType: 'WEB_PAGE_TYPE_BROWSE',
    });
    expect(parseResolveUrl({})).toEqual({});
  });
});

describe('parseChannelPage over the recorded first tab pages', () => {
  it('videos tab (Creative Commons): channel, handle, 30 videos in order with duration, views and age, and the token its recorded continuation was fetched with', () => {
    const file = `${TAB}videos/generated_mock_3.json`;
    expect(sent(file)).toMatchObject({ browseId: 'UCTwECeGqMZee77BjdoYtI2Q', params: TAB_PARAMS.videos });
    const p = parseChannelPage(json(file));
    expect(p).toMatchObject({
      channelId: 'UCTwECeGqMZee77BjdoYtI2Q',
      title: 'Creative Commons',
      handle: 'creativecommons',
      selectedTab: 'videos',
    });
    expect(p.videos).toHaveLength(30);
    expect(new Set(p.videos.map((v) => v.videoId)).size).toBe(30);
    expect(p.videos[0]).toEqual({
      videoId: 'BD-LB23rRBE',
      title:
        'Expert Panel III: Global Perspectives on Open Heritage and Diversity, Inclusion, and Sustainability',
      durationSeconds: 4054,
      viewCountText: '28 views',
      viewCount: 28,
      publishedText: '13 days ago',
    });
    expect(p.videos.at(-1)).toMatchObject({
      videoId: 'Wi5vPm56fzg',
      durationSeconds: 3620,
      publishedText: '1 year ago',
    });
    // the sort chips (Latest / Popular / Oldest) carry continuation commands too: not the grid's token
    expect(p.nextToken).toBe(sent(`${TAB}videos/generated_mock_4.json`).continuation);
  });

  it('shorts tab (Doobydobap): 48 shortsLockupViewModel items, title and abbreviated views, no duration', () => {
    const file = `${TAB}shorts/generated_mock_2.json`;
    expect(sent(file)).toMatchObject({ browseId: 'UCh8gHdtzO2tXd593_bjErWg', params: TAB_PARAMS.shorts });
    const p = parseChannelPage(json(file));
    expect(p).toMatchObject({
      channelId: 'UCh8gHdtzO2tXd593_bjErWg',
      title: 'Doobydobap',
      handle: 'Doobydobap',
    });
    expect(p.selectedTab).toBe('shorts');
    expect(p.videos).toHaveLength(48);
    expect(p.videos[0]).toEqual({
      videoId: 'l-X5WbDSH2o',
      title: 'Packing lunch for my special roommate',
      viewCountText: '895k views',
      viewCount: 895_000,
    });
    expect(p.nextToken).toBe(sent(`${TAB}shorts/generated_mock_3.json`).continuation);
  });

  it('streams tab (Jeff Geerling): past streams with "Streamed … ago" and their duration', () => {
    const file = `${TAB}livestreams/generated_mock_3.json`;
    expect(sent(file)).toMatchObject({ browseId: 'UCR-DXc1voovS8nhAvccRZhg', params: TAB_PARAMS.streams });
    const p = parseChannelPage(json(file));
    expect(p).toMatchObject({ title: 'Jeff Geerling', handle: 'JeffGeerling', selectedTab: 'streams' });
    expect(p.videos).toHaveLength(30);
    expect(p.videos[0]).toEqual({
      videoId: '27J-wwgZydE',
      title: "The 1 Million Subscriber 'It was DNS' Livestream",
      durationSeconds: 3053,
      viewCountText: '43k views',
      viewCount: 43_000,
      publishedText: 'Streamed 6 months ago',
    });
    expect(p.videos.every((v) => v.publishedText?.startsWith('Streamed'))).toBe(true);
    expect(p.nextToken).toBe(sent(`${TAB}livestreams/generated_mock_4.json`).continuation);
  });

  it.each([
    [
      `${CH}kurzgesagt/generated_mock_2.json`,
      'UCsXVk37bltHxD1rDPwtNM8Q',
      'Kurzgesagt – In a Nutshell',
      'kurzgesagt',
      'D0WQK7cMJn8',
    ],
    [
      `${CH}captaindisillusion/generated_mock_3.json`,
      'UCEOXxzW2vU0P-0THehuIIeg',
      'Captain Disillusion',
      'CaptainDisillusion',
      'xDLxFGXuPEc',
    ],
    [`${CH}vsauce/generated_mock_3.json`, 'UC6nSFpj9HTCZ5t-N3Rm3-HA', 'Vsauce', 'Vsauce', undefined],
  ])('channel page %s: %s %s @%s', (file, channelId, title, handle, firstId) => {
    const p = parseChannelPage(json(file));
    expect(p).toMatchObject({ channelId, title, handle, selectedTab: 'videos' });
    expect(p.videos).toHaveLength(30);
    if (firstId) expect(p.videos[0]?.videoId).toBe(firstId);
    expect(
      p.videos.every((v) => /^[\w-]{11}$/.test(v.videoId) && v.title !== '' && v.durationSeconds! > 0),
    ).toBe(true);
    expect(p.nextToken).toMatch(/^4qmF/);
  });

  it.each([
    [2, 'UCoaO4U_p7G7AwalqSbGCZOA', 'This channel was removed because it violated our Community Guidelines.'],
    [
      3,
      'UCTGjY2I-ZUGnwVoWAGRd7XQ',
      "This account has been terminated for a violation of YouTube's Terms of Service.",
    ],
    [4, 'UCAUc4iz6edWerIjlnL8OSSw', 'This channel does not exist.'],
    [5, 'UCPWXIOPK-9myzek6jHR5yrg', 'This channel was removed because it violated our Community Guidelines.'],
    [
      6,
      'UCI4i4RgFT5ilfMpna4Z_Y8w',
      'This account has been terminated because we received multiple third-party claims',
    ],
    [7, 'UC-nQp2ewj2Yeg5w7VyoVBwQ', 'This channel was removed because it violated our Community Guidelines.'],
  ])('not available (mock %i, %s): the alert, no videos', (n, id, message) => {
    const file = `${CH}notavailable/generated_mock_${n}.json`;
    expect(sent(file).browseId).toBe(id);
    const p = parseChannelPage(json(file));
    expect(p.error).toContain(message);
    expect(p.videos).toEqual([]);
  });

  it('the recorded HTTP 400 for a malformed id is an error body, not a page', () => {
    const res = loadFixture({ file: `${CH}notavailable/generated_mock_8.json` });
    expect(sent(`${CH}notavailable/generated_mock_8.json`).browseId).toBe('DOESNT-EXIST');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ error: { status: 'INVALID_ARGUMENT' } });
  });

  it('a redirect to another channel (navigateAction) and an age gate are reported, not listed', () => {
    const redirect = parseChannelPage({
      onResponseReceivedActions: [
        {
          navigateAction: {
            endpoint: {
              commandMetadata: { webCommandMetadata: { webPageType: 'WEB_PAGE_TYPE_CHANNEL' } },
              browseEndpoint: { browseId: 'UClgRkhTL3_hImCAmdLfDE4g' },
            },
          },
        },
      ],
    });
    expect(redirect).toEqual({ redirectTo: 'UClgRkhTL3_hImCAmdLfDE4g', videos: [] });
    const gate = parseChannelPage({
      contents: {
        twoColumnBrowseResultsRenderer: {
          tabs: [{ tabRenderer: { content: { channelAgeGateRenderer: {} } } }],
        },
      },
    });
    expect(gate.ageGated).toBe(true);
  });
});

describe('parseChannelContinuation over the recorded continuation pages', () => {
  it('videos: 30 more and the next token', () => {
    const p = parseChannelContinuation(json(`${TAB}videos/generated_mock_4.json`));
    expect(p.videos).toHaveLength(30);
    expect(p.videos[0]).toMatchObject({ videoId: 'CIFHx7_z3Vc', durationSeconds: 3601, viewCount: 117 });
    expect(p.nextToken).toMatch(/^4qmF/);
  });

  it('shorts: 48 more and the next token', () => {
    const p = parseChannelContinuation(json(`${TAB}shorts/generated_mock_3.json`));
    expect(p.videos).toHaveLength(48);
    expect(p.videos[0]).toEqual({
      videoId: 'R8ydpPnC6vI',
      title: 'Sleepless Nights in Seoul',
      viewCountText: '429k views',
      viewCount: 429_000,
    });
    expect(p.videos.at(-1)).toMatchObject({ viewCountText: '3m views', viewCount: 3_000_000 });
    expect(p.nextToken).toBeDefined();
  });

  it('streams: the last 27, and no token (the end of the tab)', () => {
    const p = parseChannelContinuation(json(`${TAB}livestreams/generated_mock_4.json`));
    expect(p.videos).toHaveLength(27);
    expect(p.nextToken).toBeUndefined();
    const first = parseChannelPage(json(`${TAB}livestreams/generated_mock_3.json`));
    const all = [...first.videos, ...p.videos].map((v) => v.videoId);
    expect(new Set(all).size).toBe(57);
  });
});

describe('item shapes', () => {
  it('reads a live-now and an upcoming lockup, and skips playlist lockups', () => {
    const lockup = (
      badge: Record<string, string>,
      parts: string[],
      contentType = 'LOCKUP_CONTENT_TYPE_VIDEO',
    ) => ({
      richItemRenderer: {
        content: {
          lockupViewModel: {
            contentId: 'F1xioXWb8CY',
            contentType,
            contentImage: {
              thumbnailViewModel: {
                overlays: [
                  { thumbnailBottomOverlayViewModel: { badges: [{ thumbnailBadgeViewModel: badge }] } },
                ],
              },
            },
            metadata: {
              lockupMetadataViewModel: {
                title: { content: 'A stream' },
                metadata: {
                  contentMetadataViewModel: {
                    metadataRows: [{ metadataParts: parts.map((content) => ({ text: { content } })) }],
                  },
                },
              },
            },
          },
        },
      },
    });
    expect(
      itemVideo(
        lockup({ text: 'LIVE', badgeStyle: 'THUMBNAIL_OVERLAY_BADGE_STYLE_LIVE' }, ['1.2K watching']),
      ),
    ).toEqual({
      videoId: 'F1xioXWb8CY',
      title: 'A stream',
      isLive: true,
      viewCountText: '1.2K watching',
    });
    expect(
      itemVideo(lockup({ text: 'UPCOMING' }, ['15 waiting', 'Scheduled for 6/1/26, 9:00 PM'])),
    ).toMatchObject({
      isUpcoming: true,
      publishedText: 'Scheduled for 6/1/26, 9:00 PM',
    });
    expect(itemVideo(lockup({ text: '12:00' }, [], 'LOCKUP_CONTENT_TYPE_PLAYLIST'))).toBeUndefined();
  });

  it('reads the pre-2025 videoRenderer and reelItemRenderer', () => {
    expect(
      itemVideo({
        richItemRenderer: {
          content: {
            videoRenderer: {
              videoId: 'F1xioXWb8CY',
              title: { runs: [{ text: 'Old' }] },
              lengthText: { simpleText: '4:05' },
              viewCountText: { simpleText: '1,234 views' },
              publishedTimeText: { simpleText: '3 years ago' },
            },
          },
        },
      }),
    ).toEqual({
      videoId: 'F1xioXWb8CY',
      title: 'Old',
      durationSeconds: 245,
      viewCountText: '1,234 views',
      viewCount: 1234,
      publishedText: '3 years ago',
    });
    expect(
      itemVideo({ reelItemRenderer: { videoId: 'tjz2u2DiveM', headline: { simpleText: 'Reel' } } }),
    ).toEqual({
      videoId: 'tjz2u2DiveM',
      title: 'Reel',
    });
  });

  it.each([
    ['1:07:34', 4054],
    ['0:59', 59],
    ['12:00', 720],
    ['LIVE', undefined],
    ['SHORTS', undefined],
    ['1:2', undefined],
    [undefined, undefined],
  ])('clockSeconds(%j) → %j', (s, n) => {
    expect(clockSeconds(s)).toBe(n);
  });
});
