import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import { aiV1, commentsV1 } from '@subx/contracts';
import { OPERATION_SPECS } from '../../src/openapi/operations.ts';
import { KEYS, NEXT_MIDNIGHT, VIDEO, VIDEO_URL, appError, buildTestGateway } from './support.ts';
import type { TestGateway } from './support.ts';

let gw: TestGateway;
beforeEach(async () => {
  gw = await buildTestGateway();
});
afterEach(async () => {
  await gw.app.close();
});

function summary(overrides: Partial<aiV1.SummarizeResponse> = {}): aiV1.SummarizeResponse {
  return {
    videoId: VIDEO,
    summary: 'A short summary.',
    timestamps: [{ seconds: 12, topic: 'Intro', text: 'It begins.' }],
    videoTitle: 'Title',
    videoDuration: 900,
    videoChannel: 'Chan',
    cached: false,
    model: 'local-extractive',
    generatedAt: '2026-03-10T10:00:00.000Z',
    language: 'en',
    ...overrides,
  };
}

/**
 * An AI service with a summary cache, as the gateway sees it: a cache-only look answers the entry
 * or, on a miss, the duration and language; a real call generates the entry.
 */
function cachingSummaries(gwRef: () => TestGateway, entry: aiV1.SummarizeResponse) {
  let cached: aiV1.SummarizeResponse | null = null;
  gwRef().backends.handlers.summarize = async (req) => {
    if (cached) return { ...cached, cached: true };
    if (req.cachedOnly) {
      return {
        ...entry,
        summary: '',
        timestamps: [],
        cached: false,
        generatedAt: '',
        language: req.language || 'en',
      };
    }
    cached = { ...entry, language: req.language || entry.language };
    return { ...cached, cached: false };
  };
}

describe('POST /api/v1/summarize', () => {
  const summarize = (payload: unknown, key: string = KEYS.pro) =>
    gw.app.inject({
      method: 'POST',
      url: '/api/v1/summarize',
      payload: payload as object,
      headers: { 'x-api-key': key },
    });

  it('returns the summary shape and charges by duration (15 min: 4 credits)', async () => {
    gw.backends.handlers.summarize = async () => summary();
    const res = await summarize({ video_url: VIDEO_URL, style: 'key_points' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      summary: 'A short summary.',
      video_id: VIDEO,
      credits_used: 4,
      cached: false,
      video_metadata: { title: 'Title', duration: 900, channel: 'Chan' },
      timestamps: [{ seconds: 12, topic: 'Intro', text: 'It begins.' }],
      model: 'local-extractive',
      language: 'en',
      rate_limit: {
        limit: 10_000,
        remaining: 9_999,
        reset: NEXT_MIDNIGHT / 1000,
        reset_at: expect.any(String),
      },
      request_id: res.headers['x-request-id'],
    });
    // A cache-only look prices the work first; then exactly that price is reserved.
    expect(gw.backends.calls.map((c) => c.request)).toEqual([
      { videoId: VIDEO, style: aiV1.SummaryStyle.SUMMARY_STYLE_KEY_POINTS, language: '', cachedOnly: true },
      {
        videoId: VIDEO,
        style: aiV1.SummaryStyle.SUMMARY_STYLE_KEY_POINTS,
        language: 'en',
        cachedOnly: false,
      },
    ]);
    expect(gw.ledger.reservations[0]).toMatchObject({ amount: 4, state: 'committed' });
    expect(gw.ledger.balances.get('acc_pro')).toBe(96);
  });

  it('a 2-credit video needs 2 credits, not the worst case of 6', async () => {
    gw.ledger.balances.set('acc_pro', 2);
    cachingSummaries(() => gw, summary({ videoDuration: 300 }));
    const res = await summarize({ video_url: VIDEO_URL });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().credits_used).toBe(2);
    expect(gw.ledger.reservations.map((r) => r.amount)).toEqual([2]);
    expect(gw.ledger.balances.get('acc_pro')).toBe(0);
  });

  it('an entry already paid for is free whatever the balance, without touching the ledger', async () => {
    cachingSummaries(() => gw, summary({ videoDuration: 300 }));
    expect((await summarize({ video_url: VIDEO_URL })).json().credits_used).toBe(2);
    gw.ledger.balances.set('acc_pro', 0);
    const again = await summarize({ video_url: VIDEO_URL });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ cached: true, credits_used: 0 });
    expect(gw.ledger.reservations).toHaveLength(1);
  });

  it('402 names the real price and the real balance; nothing is generated', async () => {
    gw.ledger.balances.set('acc_pro', 1);
    cachingSummaries(() => gw, summary({ videoDuration: 300 }));
    const res = await summarize({ video_url: VIDEO_URL });
    expect(res.statusCode).toBe(402);
    expect(res.json().error).toMatchObject({
      code: 'INSUFFICIENT_CREDITS',
      message: expect.stringMatching(/needs up to 2 credits and 1 is available/),
    });
    expect(gw.backends.calls.filter((c) => !(c.request as { cachedOnly: boolean }).cachedOnly)).toHaveLength(
      0,
    );
  });

  it('reads the requested language and says which language it read', async () => {
    cachingSummaries(() => gw, summary({ videoDuration: 300 }));
    const res = await summarize({ video_url: VIDEO_URL, language: 'fr' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().language).toBe('fr');
    expect(gw.backends.calls.every((c) => (c.request as { language: string }).language === 'fr')).toBe(true);
    expect((await summarize({ video_url: VIDEO_URL, language: 'not a code' })).statusCode).toBe(400);
  });

  it.each([
    [600, 2],
    [601, 4],
    [1800, 4],
    [1801, 6],
  ])('a %i s video costs %i credits', async (duration, credits) => {
    gw.backends.handlers.summarize = async () => summary({ videoDuration: duration });
    expect((await summarize({ video_url: VIDEO_URL })).json().credits_used).toBe(credits);
  });

  it('a user pays once per cache entry; another user pays once too; a new entry is paid again', async () => {
    gw.backends.handlers.summarize = async () => summary({ cached: true });
    const first = await summarize({ video_url: VIDEO_URL });
    const again = await summarize({ video_url: VIDEO_URL });
    const other = await summarize({ video_url: VIDEO_URL }, KEYS.pro2);
    expect([first.json().credits_used, first.json().cached]).toEqual([4, true]);
    expect([again.json().credits_used, again.json().cached]).toEqual([0, true]);
    expect([other.json().credits_used, other.json().cached]).toEqual([4, true]);
    // Another style is another cache entry.
    expect((await summarize({ video_url: VIDEO_URL, style: 'detailed' })).json().credits_used).toBe(4);
    // The entry expired and was regenerated: a new generated_at is a new entry.
    gw.backends.handlers.summarize = async () => summary({ generatedAt: '2026-03-11T10:00:00.000Z' });
    expect((await summarize({ video_url: VIDEO_URL })).json().credits_used).toBe(4);
    expect(gw.ledger.events.map((e) => [e.accountId, e.credits])).toEqual([
      ['acc_pro', 4],
      ['acc_pro2', 4],
      ['acc_pro', 4],
      ['acc_pro', 4],
    ]);
  });

  it('concurrent requests of one user for one entry are charged once', async () => {
    gw.backends.handlers.summarize = async () => summary();
    const results = await Promise.all([1, 2, 3].map(() => summarize({ video_url: VIDEO_URL })));
    expect(results.map((r) => r.json().credits_used).sort()).toEqual([0, 0, 4]);
    expect(gw.ledger.balances.get('acc_pro')).toBe(96);
  });

  it('free tier is 403; bad style is 400; AI errors release the reservation', async () => {
    expect((await summarize({ video_url: VIDEO_URL }, KEYS.free)).statusCode).toBe(403);
    const bad = await summarize({ video_url: VIDEO_URL, style: 'haiku' });
    expect(bad.json().error.message).toBe('body.style must be one of: brief, detailed, key_points');
    gw.backends.handlers.summarize = async () => {
      throw appError('NO_SUBTITLES', 'none');
    };
    const res = await summarize({ video_url: VIDEO_URL });
    expect(res.statusCode).toBe(404);
    expect(gw.ledger.balances.get('acc_pro')).toBe(100);
    expect(gw.kv.data.size).toBe(0);
  });
});

describe('GET /api/v1/comments', () => {
  const comments =
    (n: number, extra: Partial<commentsV1.GetCommentsResponse> = {}) =>
    async () => ({
      videoId: VIDEO,
      comments: Array.from({ length: n }, (_, i) => ({
        id: `c${i}`,
        author: `@user${i}`,
        text: `comment ${i}`,
        likes: BigInt(i * 10),
        publishedAt: 1_700_000_000n + BigInt(i),
        isReply: i % 2 === 1,
        ...(i % 2 === 1 ? { parentId: `c${i - 1}` } : {}),
      })),
      commentsDisabled: false,
      totalCount: 5000n,
      cached: false,
      ...extra,
    });
  const get = (query: string, key: string = KEYS.pro) =>
    gw.app.inject({ method: 'GET', url: `/api/v1/comments?${query}`, headers: { 'x-api-key': key } });

  it('returns comments with the documented fields and charges ceil(returned / 500)', async () => {
    gw.backends.handlers.getComments = comments(501);
    const res = await get(`url=${encodeURIComponent(VIDEO_URL)}&max=1000&sort=time`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.comments[1]).toEqual({
      author: '@user1',
      text: 'comment 1',
      likes: 10,
      published_at: 1_700_000_001,
      is_reply: true,
    });
    expect(body).toMatchObject({
      video_id: VIDEO,
      comment_count: 501,
      comments_disabled: false,
      cached: false,
      credits_used: 2,
      request_id: res.headers['x-request-id'],
    });
    // first the cache alone (a cached listing is free), then the real call under a reservation
    expect(gw.backends.calls.map((c) => c.request)).toEqual([
      {
        videoId: VIDEO,
        max: 1000,
        sort: commentsV1.CommentSort.COMMENT_SORT_TIME,
        forceRefresh: false,
        cachedOnly: true,
      },
      {
        videoId: VIDEO,
        max: 1000,
        sort: commentsV1.CommentSort.COMMENT_SORT_TIME,
        forceRefresh: false,
        cachedOnly: false,
      },
    ]);
    expect(gw.ledger.reservations[0]).toMatchObject({ amount: 2, state: 'committed' });
  });

  it('defaults: max 500, sort relevance', async () => {
    gw.backends.handlers.getComments = comments(3);
    const res = await get(`url=${encodeURIComponent(VIDEO_URL)}`);
    expect(res.json().credits_used).toBe(1);
    expect(gw.backends.calls[0]?.request).toMatchObject({
      max: 500,
      sort: commentsV1.CommentSort.COMMENT_SORT_RELEVANCE,
    });
  });

  it('cached and disabled comments are free; disabled means an empty list', async () => {
    gw.backends.handlers.getComments = comments(10, { cached: true });
    expect((await get(`url=${encodeURIComponent(VIDEO_URL)}`)).json()).toMatchObject({
      cached: true,
      credits_used: 0,
    });
    gw.backends.handlers.getComments = comments(0, { commentsDisabled: true });
    const res = await get(`url=${encodeURIComponent(VIDEO_URL)}`);
    expect(res.json()).toMatchObject({
      comments: [],
      comments_disabled: true,
      credits_used: 0,
      comment_count: 0,
    });
    expect(gw.ledger.events).toEqual([]);
  });

  it('a cached listing is served for 0 credits whatever the balance, without a reservation', async () => {
    gw.ledger.balances.set('acc_pro', 0);
    gw.backends.handlers.getComments = async (req: { cachedOnly: boolean }) =>
      req.cachedOnly
        ? { ...(await comments(700)()), cached: true }
        : Promise.reject(new Error('the platform must not be asked'));
    const res = await get(`url=${encodeURIComponent(VIDEO_URL)}&max=600`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ cached: true, credits_used: 0, comment_count: 600 });
    expect(gw.ledger.reservations).toHaveLength(0);
  });

  it('a listing not in the cache still needs the worst case in credits; the 402 names the balance', async () => {
    gw.ledger.balances.set('acc_pro', 1);
    gw.backends.handlers.getComments = comments(10);
    const res = await get(`url=${encodeURIComponent(VIDEO_URL)}&max=1000`);
    expect(res.statusCode).toBe(402);
    expect(res.json().error).toMatchObject({ code: 'INSUFFICIENT_CREDITS', required: 2, available: 1 });
  });

  it.each(['max=0', 'max=2001', 'sort=top'])('%s is 400 INVALID_REQUEST', async (q) => {
    const res = await get(`url=${encodeURIComponent(VIDEO_URL)}&${q}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('INVALID_REQUEST');
  });

  it('requires Pro', async () => {
    const res = await get(`url=${encodeURIComponent(VIDEO_URL)}`, KEYS.free);
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('TIER_REQUIRED');
  });
});

describe('POST /api/v1/comments/analyze', () => {
  const analyze = (payload: unknown) =>
    gw.app.inject({
      method: 'POST',
      url: '/api/v1/comments/analyze',
      payload: payload as object,
      headers: { 'x-api-key': KEYS.pro },
    });
  const result = (cached: boolean): aiV1.AnalyzeCommentsResponse => ({
    videoId: VIDEO,
    sentiment: aiV1.Sentiment.SENTIMENT_POSITIVE,
    themes: ['music', 'nostalgia'],
    keyQuotes: [{ text: 'Classic!', author: '@a' }],
    sampleSize: 50,
    totalComments: 1234n,
    cached,
    model: 'local-lexicon',
    generatedAt: '2026-03-10T10:00:00.000Z',
  });

  it('returns the analysis shape; 3 credits, 0 when cached', async () => {
    gw.backends.handlers.analyzeComments = async () => result(false);
    const res = await analyze({ video_url: VIDEO_URL });
    expect(res.json()).toEqual({
      sentiment: 'positive',
      themes: ['music', 'nostalgia'],
      key_quotes: [{ text: 'Classic!', author: '@a' }],
      video_id: VIDEO,
      sample_size: 50,
      total_comments: 1234,
      credits_used: 3,
      cached: false,
      model: 'local-lexicon',
      rate_limit: {
        limit: 10_000,
        remaining: 9_999,
        reset: NEXT_MIDNIGHT / 1000,
        reset_at: expect.any(String),
      },
      request_id: res.headers['x-request-id'],
    });
    expect(gw.backends.calls.map((c) => c.request)).toEqual([
      { videoId: VIDEO, sampleSize: 50, language: '', cachedOnly: true },
      { videoId: VIDEO, sampleSize: 50, language: '', cachedOnly: false },
    ]);
    gw.backends.handlers.analyzeComments = async () => result(true);
    expect((await analyze({ video_url: VIDEO_URL, sample_size: 100 })).json()).toMatchObject({
      credits_used: 0,
      cached: true,
    });
    expect(gw.ledger.balances.get('acc_pro')).toBe(97);
  });

  it('a cached analysis is free whatever the balance; the language hint is passed on', async () => {
    gw.ledger.balances.set('acc_pro', 0);
    gw.backends.handlers.analyzeComments = async () => result(true);
    const res = await analyze({ video_url: VIDEO_URL, language: 'de' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ cached: true, credits_used: 0 });
    expect(gw.ledger.reservations).toHaveLength(0);
    expect(gw.backends.calls[0]?.request).toMatchObject({ language: 'de' });
  });

  it('NOT_ENOUGH_COMMENTS and COMMENTS_DISABLED pass through and charge nothing', async () => {
    gw.backends.handlers.analyzeComments = async () => {
      throw appError('NOT_ENOUGH_COMMENTS', `Video ${VIDEO} has 3 comments; analysis needs at least 10.`);
    };
    const few = await analyze({ video_url: VIDEO_URL });
    expect([few.statusCode, few.json().error.code]).toEqual([400, 'NOT_ENOUGH_COMMENTS']);
    gw.backends.handlers.analyzeComments = async () => {
      throw appError('COMMENTS_DISABLED', 'off');
    };
    const off = await analyze({ video_url: VIDEO_URL });
    expect([off.statusCode, off.json().error.code]).toEqual([404, 'COMMENTS_DISABLED']);
    expect(gw.ledger.balances.get('acc_pro')).toBe(100);
  });

  it('sample_size outside 10..100 or not an integer is 400', async () => {
    for (const sample_size of [9, 101, 50.5, '50']) {
      expect((await analyze({ video_url: VIDEO_URL, sample_size })).statusCode).toBe(400);
    }
  });
});

describe('GET /api/v1/validate', () => {
  const validate = (query: string, remoteAddress = '10.0.0.1') =>
    gw.app.inject({ method: 'GET', url: `/api/v1/validate?${query}`, remoteAddress });

  it('needs no key, returns the validation result and passes cached through', async () => {
    gw.backends.handlers.validateVideo = async (req) => ({
      valid: true,
      hasSubtitles: true,
      manualLanguages: ['en', 'de'],
      autoGeneratedLanguages: ['en'],
      videoTitle: `Video ${req.videoId}`,
      duration: 212,
      invalidReason: '',
      captionsPending: '',
      cached: true,
    });
    const res = await validate(`url=${encodeURIComponent(VIDEO_URL)}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      valid: true,
      has_subtitles: true,
      available_languages: { manual: ['en', 'de'], auto_generated: ['en'] },
      video_title: `Video ${VIDEO}`,
      duration: 212,
      cached: true,
      reason: null,
      request_id: res.headers['x-request-id'],
    });
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    expect(gw.ledger.reservations).toEqual([]);
  });

  it.each([
    [false, 'private', 'private', 'The video is private.'],
    [false, 'members_only', 'members_only', 'The video is for channel members only.'],
    [false, 'video_not_found', 'video_not_found', 'No video exists with this id.'],
    // An extractor that does not say why yet: still a reason, not a null.
    [false, '', 'video_unavailable', 'The video cannot be read.'],
    [true, '', 'no_subtitles', 'The video can be read but has no subtitles, manual or auto-generated.'],
    // captions that are not there yet: a stream that ended and is being processed, or is live
    [
      true,
      '',
      'processing',
      'The video is a live stream that has ended and is still being processed; its captions come once processing is complete.',
      'post_live',
    ],
    [true, '', 'live', 'The video is live now; its captions come once the stream has ended.', 'live'],
  ])(
    'valid %s with invalid_reason %j: reason %s',
    async (valid, invalidReason, code, message, pending = '') => {
      gw.backends.handlers.validateVideo = async () => ({
        valid,
        hasSubtitles: false,
        manualLanguages: [],
        autoGeneratedLanguages: [],
        videoTitle: '',
        duration: 0,
        invalidReason,
        captionsPending: pending,
        cached: false,
      });
      const res = await validate(`url=${encodeURIComponent(VIDEO_URL)}`);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ valid, has_subtitles: false, reason: { code, message } });
      const schema = OPERATION_SPECS.find((o) => o.operationId === 'validate')!.response;
      const check = new Ajv({ strict: false }).compile(schema);
      expect(check(res.json()), JSON.stringify(check.errors)).toBe(true);
    },
  );

  it('bad input: missing url 400 INVALID_REQUEST, other URLs 400 INVALID_URL', async () => {
    expect((await validate('')).json().error.code).toBe('INVALID_REQUEST');
    expect((await validate('url=https%3A%2F%2Fexample.com')).json().error.code).toBe('INVALID_URL');
  });

  it('is limited per client IP (429 with Retry-After)', async () => {
    await gw.app.close();
    gw = await buildTestGateway({ ipLimit: 2 });
    gw.backends.handlers.validateVideo = async () => {
      throw appError('VIDEO_NOT_FOUND', 'gone');
    };
    expect((await validate(`url=${encodeURIComponent(VIDEO_URL)}`, '10.0.0.9')).statusCode).toBe(404);
    expect((await validate(`url=${encodeURIComponent(VIDEO_URL)}`, '10.0.0.9')).statusCode).toBe(404);
    const limited = await validate(`url=${encodeURIComponent(VIDEO_URL)}`, '10.0.0.9');
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error.code).toBe('RATE_LIMITED');
    expect(limited.headers['retry-after']).toBe('42');
    expect((await validate(`url=${encodeURIComponent(VIDEO_URL)}`, '10.0.0.10')).statusCode).toBe(404);
  });
});
