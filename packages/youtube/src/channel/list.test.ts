import { Errors } from '@subx/errors';
import { describe, expect, it } from 'vitest';
import type { InnertubeCalls } from '../listing/innertube.ts';
import { UpstreamHttpError } from '../transport.ts';
import { listChannelTab, resolveChannelId } from './list.ts';

/**
 * The resolution and redirect rules of listChannelTab over an in-memory InnerTube (our own port): the
 * shapes the recordings do not hold (vanity redirects, channel redirects, odd answers). The recorded
 * shapes are covered through the fake in test/channels-and-long-playlists.test.ts.
 */

const ID_A = 'UCaaaaaaaaaaaaaaaaaaaaaa';
const ID_B = 'UCbbbbbbbbbbbbbbbbbbbbbb';

const resolveAnswer = (webPageType: string, extra: Record<string, unknown>) => ({
  endpoint: { commandMetadata: { webCommandMetadata: { webPageType } }, ...extra },
});

const tabPage = (channelId: string, selected: string, ids: string[]) => ({
  metadata: { channelMetadataRenderer: { title: `T ${channelId}`, externalId: channelId } },
  contents: {
    twoColumnBrowseResultsRenderer: {
      tabs: [
        {
          tabRenderer: {
            selected: true,
            endpoint: {
              commandMetadata: { webCommandMetadata: { url: `/channel/${channelId}/${selected}` } },
            },
            content: {
              richGridRenderer: {
                contents: ids.map((id) => ({
                  richItemRenderer: {
                    content: { lockupViewModel: { contentId: id, contentType: 'LOCKUP_CONTENT_TYPE_VIDEO' } },
                  },
                })),
              },
            },
          },
        },
      ],
    },
  },
});

function fakeCalls(o: {
  resolve?: Record<string, unknown>;
  browse?: Record<string, unknown>;
}): InnertubeCalls & { log: string[] } {
  const log: string[] = [];
  return {
    log,
    resolveUrl: async (url) => {
      log.push(`resolve ${url}`);
      const a = o.resolve?.[url];
      if (a instanceof Error) throw a;
      if (a === undefined)
        throw Errors.upstreamError(
          'The video platform answered HTTP 404',
          new UpstreamHttpError(404, 'NOT_FOUND'),
        );
      return a;
    },
    browse: async (body) => {
      const key = String(body.browseId ?? body.continuation);
      log.push(`browse ${key}`);
      const a = o.browse?.[key];
      if (a instanceof Error) throw a;
      return a ?? {};
    },
  };
}

describe('resolveChannelId', () => {
  it('follows WEB_PAGE_TYPE_UNKNOWN vanity redirects by path only, on the platform host', async () => {
    const calls = fakeCalls({
      resolve: {
        'https://www.youtube.com/@TheDailyShow': resolveAnswer('WEB_PAGE_TYPE_UNKNOWN', {
          urlEndpoint: { url: 'https://evil.youtube.com.example/thedailyshow' },
        }),
        // what the path would resolve to on the platform: never asked, the host is not the platform's
        'https://www.youtube.com/thedailyshow': resolveAnswer('WEB_PAGE_TYPE_CHANNEL', {
          browseEndpoint: { browseId: ID_A },
        }),
      },
    });
    await expect(resolveChannelId(calls, { kind: 'handle', handle: 'TheDailyShow' })).rejects.toMatchObject({
      code: 'CHANNEL_NOT_FOUND',
    });
    const ok = fakeCalls({
      resolve: {
        'https://www.youtube.com/@TheDailyShow': resolveAnswer('WEB_PAGE_TYPE_UNKNOWN', {
          urlEndpoint: { url: 'https://m.youtube.com/thedailyshow?x=1' },
        }),
        'https://www.youtube.com/thedailyshow': resolveAnswer('WEB_PAGE_TYPE_CHANNEL', {
          browseEndpoint: { browseId: ID_A },
        }),
      },
    });
    expect(await resolveChannelId(ok, { kind: 'handle', handle: 'TheDailyShow' })).toBe(ID_A);
    expect(ok.log).toEqual([
      'resolve https://www.youtube.com/@TheDailyShow',
      'resolve https://www.youtube.com/thedailyshow',
    ]);
  });

  it('gives up after three hops, and on a URL that is a video, not a channel', async () => {
    const loop = fakeCalls({
      resolve: {
        'https://www.youtube.com/@loop': resolveAnswer('WEB_PAGE_TYPE_UNKNOWN', {
          urlEndpoint: { url: '/@loop' },
        }),
      },
    });
    await expect(resolveChannelId(loop, { kind: 'handle', handle: 'loop' })).rejects.toMatchObject({
      code: 'CHANNEL_NOT_FOUND',
    });
    expect(loop.log).toHaveLength(3);
    const malformed = fakeCalls({
      resolve: {
        'https://www.youtube.com/@odd': resolveAnswer('WEB_PAGE_TYPE_UNKNOWN', {
          urlEndpoint: { url: 'http://[bad' },
        }),
      },
    });
    await expect(resolveChannelId(malformed, { kind: 'handle', handle: 'odd' })).rejects.toMatchObject({
      code: 'CHANNEL_NOT_FOUND',
    });
    const video = fakeCalls({
      resolve: {
        'https://www.youtube.com/c/video': resolveAnswer('WEB_PAGE_TYPE_WATCH', {
          watchEndpoint: { videoId: 'x' },
        }),
      },
    });
    await expect(resolveChannelId(video, { kind: 'custom', name: 'video' })).rejects.toMatchObject({
      code: 'CHANNEL_NOT_FOUND',
      reason: 'not_found',
    });
  });

  it('platform trouble while resolving stays what it is (retryable), not "not found"', async () => {
    const calls = fakeCalls({
      resolve: { 'https://www.youtube.com/@busy': Errors.upstreamBlocked('http_429', 'HTTP 429') },
    });
    await expect(resolveChannelId(calls, { kind: 'handle', handle: 'busy' })).rejects.toMatchObject({
      code: 'UPSTREAM_BLOCKED',
    });
  });
});

describe('listChannelTab', () => {
  it('follows a channel redirect (navigateAction) to the channel it names', async () => {
    const redirect = {
      onResponseReceivedActions: [
        {
          navigateAction: {
            endpoint: {
              commandMetadata: { webCommandMetadata: { webPageType: 'WEB_PAGE_TYPE_CHANNEL' } },
              browseEndpoint: { browseId: ID_B },
            },
          },
        },
      ],
    };
    const calls = fakeCalls({
      browse: { [ID_A]: redirect, [ID_B]: tabPage(ID_B, 'videos', ['F1xioXWb8CY']) },
    });
    const c = await listChannelTab(calls, { url: `https://www.youtube.com/channel/${ID_A}`, max: 5 });
    expect(c).toMatchObject({ channelId: ID_B, title: `T ${ID_B}`, hasMore: false });
    expect(c.videos.map((v) => v.videoId)).toEqual(['F1xioXWb8CY']);
    expect(calls.log).toEqual([`browse ${ID_A}`, `browse ${ID_B}`]);
  });

  it('a channel redirecting to itself stops after three hops as CHANNEL_NOT_FOUND', async () => {
    const self = {
      onResponseReceivedActions: [
        {
          navigateAction: {
            endpoint: {
              commandMetadata: { webCommandMetadata: { webPageType: 'WEB_PAGE_TYPE_BROWSE' } },
              browseEndpoint: { browseId: ID_A },
            },
          },
        },
      ],
    };
    const calls = fakeCalls({ browse: { [ID_A]: self } });
    await expect(
      listChannelTab(calls, { url: `https://www.youtube.com/channel/${ID_A}`, max: 5 }),
    ).rejects.toMatchObject({ code: 'CHANNEL_NOT_FOUND' });
    expect(calls.log).toHaveLength(4);
  });

  it('an answer with no channel, no tab and no alert is UPSTREAM_ERROR, not an empty channel', async () => {
    const calls = fakeCalls({ browse: { [ID_A]: { responseContext: {} } } });
    await expect(
      listChannelTab(calls, { url: `https://www.youtube.com/channel/${ID_A}`, max: 5 }),
    ).rejects.toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
  });

  it('an age gate is CHANNEL_NOT_FOUND (age_restricted)', async () => {
    const gate = {
      contents: {
        twoColumnBrowseResultsRenderer: {
          tabs: [{ tabRenderer: { content: { channelAgeGateRenderer: {} } } }],
        },
      },
    };
    const calls = fakeCalls({ browse: { [ID_A]: gate } });
    await expect(
      listChannelTab(calls, { url: `https://www.youtube.com/channel/${ID_A}`, max: 5 }),
    ).rejects.toMatchObject({ code: 'CHANNEL_NOT_FOUND', reason: 'age_restricted' });
  });
});
