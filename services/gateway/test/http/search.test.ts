/**
 * GET /api/v1/search over a fake extractor: the request it makes of the extractor, the answer's
 * shape for each kind of result, the cursor bound to its search, and credits when the pricing table
 * gives search a price (a page served from the cache stays free).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { extractorV1 } from '@subx/contracts';
import { DEFAULT_PRICING } from '@subx/credits';
import { KEYS, buildTestGateway } from './support.ts';
import type { TestGateway } from './support.ts';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.app.close();
  gw = undefined;
});

const base = {
  title: 't',
  channel: 'c',
  channelId: 'UCaaaaaaaaaaaaaaaaaaaaaa',
  thumbnail: '',
  isShort: false,
  isLive: false,
  isUpcoming: false,
  handle: '',
};
const PAGE: extractorV1.SearchResponse = {
  results: [
    {
      ...base,
      kind: 'video',
      id: 'aaaaaaaaaaa',
      durationSeconds: 61.4,
      publishedText: '1 day ago',
      viewCount: 7n,
    },
    { ...base, kind: 'video', id: 'bbbbbbbbbbb', isShort: true, viewCount: 3n },
    { ...base, kind: 'channel', id: 'UCbbbbbbbbbbbbbbbbbbbbbb', handle: 'chan', subscriberCount: 2000n },
    { ...base, kind: 'playlist', id: 'PLxyz', videoCount: 12n },
  ],
  correctedQuery: '',
  nextContinuation: 'PLATFORM-TOKEN',
  cached: false,
};

const get = (url: string, key: string = KEYS.free) =>
  gw!.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });

describe('GET /api/v1/search', () => {
  it('answers every kind of result in its shape, and asks the extractor with the filters', async () => {
    gw = await buildTestGateway();
    const asked: extractorV1.SearchRequest[] = [];
    gw.backends.handlers.search = async (req) => {
      asked.push(req);
      return PAGE;
    };
    const res = await get(
      '/api/v1/search?q=%20cats%20&type=all&upload_date=week&duration=short&sort=views&features=subtitles,hd,hd',
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(asked[0]).toEqual({
      query: 'cats',
      type: extractorV1.SearchType.SEARCH_TYPE_ALL,
      filters: { uploadDate: 'week', duration: 'short', sort: 'views', features: ['hd', 'subtitles'] },
      continuation: '',
      cachedOnly: false,
    });
    const body = res.json();
    expect(body).toMatchObject({ query: 'cats', cached: false, credits_used: 0 });
    expect(body).not.toHaveProperty('corrected_query');
    expect(body.results).toEqual([
      {
        type: 'video',
        video_id: 'aaaaaaaaaaa',
        title: 't',
        channel: 'c',
        channel_id: 'UCaaaaaaaaaaaaaaaaaaaaaa',
        duration: 61,
        published: '1 day ago',
        view_count: 7,
        url: 'https://www.youtube.com/watch?v=aaaaaaaaaaa',
        thumbnail: null,
        is_short: false,
        is_live: false,
        is_upcoming: false,
      },
      expect.objectContaining({
        type: 'video',
        is_short: true,
        url: 'https://www.youtube.com/shorts/bbbbbbbbbbb',
        duration: null,
      }),
      expect.objectContaining({
        type: 'channel',
        url: 'https://www.youtube.com/channel/UCbbbbbbbbbbbbbbbbbbbbbb',
        handle: 'chan',
        subscriber_count: 2000,
      }),
      expect.objectContaining({
        type: 'playlist',
        playlist_id: 'PLxyz',
        video_count: 12,
        url: 'https://www.youtube.com/playlist?list=PLxyz',
      }),
    ]);
    expect(body.rate_limit).toBeDefined();
  });

  it('takes the search as query, or as its alias q; one of them, never two that differ', async () => {
    gw = await buildTestGateway();
    const asked: string[] = [];
    gw.backends.handlers.search = async (req) => {
      asked.push(req.query);
      return PAGE;
    };
    expect((await get('/api/v1/search?query=%20cats%20')).json().query).toBe('cats');
    expect((await get('/api/v1/search?q=dogs')).json().query).toBe('dogs');
    expect((await get('/api/v1/search?query=owls&q=owls')).statusCode).toBe(200);
    expect(asked).toEqual(['cats', 'dogs', 'owls']);
    for (const [url, message] of [
      ['/api/v1/search?query=cats&q=dogs', 'query and its alias q differ'],
      ['/api/v1/search?type=video', 'query (or its alias q)'],
      ['/api/v1/search?query=%20%20', 'query must not be only spaces'],
    ] as const) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'INVALID_REQUEST' });
      expect(res.json().error.message, url).toContain(message);
    }
    expect(asked).toHaveLength(3);
  });

  it('next_cursor carries the platform token for the same search only', async () => {
    gw = await buildTestGateway();
    const asked: extractorV1.SearchRequest[] = [];
    gw.backends.handlers.search = async (req) => {
      asked.push(req);
      return PAGE;
    };
    const cursor = (await get('/api/v1/search?q=cats&sort=date')).json().next_cursor as string;
    expect(cursor).not.toContain('PLATFORM-TOKEN');
    expect((await get(`/api/v1/search?q=cats&sort=date&cursor=${cursor}`)).statusCode).toBe(200);
    expect(asked[1]?.continuation).toBe('PLATFORM-TOKEN');
    for (const other of [
      'q=dogs&sort=date',
      'q=cats',
      'q=cats&sort=date&type=channel',
      'q=cats&sort=date&features=hd',
    ]) {
      const res = await get(`/api/v1/search?${other}&cursor=${cursor}`);
      expect(res.statusCode, other).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'INVALID_REQUEST', field: 'cursor' });
    }
    expect(asked).toHaveLength(2);
  });

  it('a price in the pricing table is charged for a fresh page, not for a cached one', async () => {
    gw = await buildTestGateway({
      deps: { pricing: { ...DEFAULT_PRICING, prices: { ...DEFAULT_PRICING.prices, search: 2 } } },
    });
    let cached = false;
    gw.backends.handlers.search = async (req) => {
      if (req.cachedOnly) return cached ? { ...PAGE, cached: true } : { ...PAGE, results: [], cached: false };
      return PAGE;
    };
    const fresh = await get('/api/v1/search?q=cats', KEYS.pro);
    expect(fresh.json()).toMatchObject({ credits_used: 2, cached: false });
    expect(gw.ledger.balances.get('acc_pro')).toBe(98);
    cached = true;
    const again = await get('/api/v1/search?q=cats', KEYS.pro);
    expect(again.json()).toMatchObject({ credits_used: 0, cached: true });
    expect(gw.ledger.balances.get('acc_pro')).toBe(98);
  });

  it('an upstream failure charges nothing', async () => {
    gw = await buildTestGateway({
      deps: { pricing: { ...DEFAULT_PRICING, prices: { ...DEFAULT_PRICING.prices, search: 2 } } },
    });
    gw.backends.handlers.search = async (req) => {
      if (req.cachedOnly) return { ...PAGE, results: [], cached: false };
      const { AppError } = await import('@subx/errors');
      throw new AppError('UPSTREAM_TIMEOUT', 'slow');
    };
    const res = await get('/api/v1/search?q=cats', KEYS.pro);
    expect(res.statusCode).toBe(504);
    expect(gw.ledger.balances.get('acc_pro')).toBe(100);
  });
});
