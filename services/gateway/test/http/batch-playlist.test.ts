import { afterEach, describe, expect, it } from 'vitest';
import { parseSrtStrict, toSrt } from '@subx/formats';
import { KEYS, VIDEO, VIDEO_URL, appError, buildTestGateway, transcript } from './support.ts';
import type { TestGateway } from './support.ts';

let gw: TestGateway;
afterEach(async () => {
  await gw?.app.close();
});

const ID_B = 'bbbbbbbbbbb';
const ID_C = 'ccccccccccc';
const url = (id: string) => `https://youtu.be/${id}`;

const batch = (payload: unknown, key: string = KEYS.free) =>
  gw.app.inject({
    method: 'POST',
    url: '/api/v1/batch',
    payload: payload as object,
    headers: { 'x-api-key': key },
  });

describe('POST /api/v1/batch', () => {
  it('with chunking: every successful item carries the chunks extract gives; a document format is 400', async () => {
    gw = await buildTestGateway();
    gw.backends.handlers.getTranscript = async (req) => {
      if (req.videoId === ID_B) throw appError('VIDEO_NOT_FOUND', `Video ${ID_B} was not found.`);
      return transcript(req.videoId);
    };
    const chunking = { max_tokens: 16, overlap_tokens: 0 };
    const res = await batch({ urls: [VIDEO_URL, url(ID_B)], chunking });
    expect(res.statusCode, res.body).toBe(200);
    const [ok, failed] = res.json().results;
    expect(failed).not.toHaveProperty('chunks');
    expect(ok.chunks.length).toBeGreaterThan(0);
    for (const chunk of ok.chunks) {
      expect(chunk.token_count).toBeLessThanOrEqual(16);
      expect(chunk.url).toBe(`https://youtu.be/${VIDEO}?t=${Math.floor(chunk.start)}`);
    }
    const extract = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      payload: { url: VIDEO_URL, chunking },
      headers: { 'x-api-key': KEYS.free },
    });
    expect(extract.statusCode, extract.body).toBe(200);
    expect(ok.chunks.map((c: { id: string }) => c.id)).toEqual(
      extract.json().chunks.map((c: { id: string }) => c.id),
    );
    const srt = await batch({ urls: [VIDEO_URL], chunking, format: 'srt' });
    expect(srt.statusCode).toBe(400);
    expect(srt.json().error.code).toBe('INVALID_REQUEST');
  });

  it('answers one item per URL in input order, charges successes only and reports credits', async () => {
    gw = await buildTestGateway();
    gw.backends.handlers.getTranscript = async (req) => {
      if (req.videoId === ID_B)
        throw appError('VIDEO_NOT_FOUND', `Video ${ID_B} was not found or is unavailable.`);
      // Finish out of order: the answer must still follow the input order.
      if (req.videoId === VIDEO) await new Promise((r) => setTimeout(r, 30));
      return transcript(req.videoId);
    };
    const res = await batch({ urls: [VIDEO_URL, url(ID_B), 'https://example.com/x', url(ID_C)] });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual([
      'credits_charged',
      'credits_details',
      'extracted_at',
      'rate_limit',
      'request_id',
      'results',
    ]);
    expect(
      body.results.map((r: { success: boolean; video_id: string | null }) => [r.success, r.video_id]),
    ).toEqual([
      [true, VIDEO],
      [false, ID_B],
      [false, null],
      [true, ID_C],
    ]);
    expect(body.results[0]).toEqual({
      success: true,
      video_id: VIDEO,
      url: VIDEO_URL,
      // the public segments: no `words` unless include names them
      subtitles: transcript(VIDEO).segments.map(({ words: _words, ...segment }) => segment),
      language: 'en',
      metadata: expect.objectContaining({ title: `Video ${VIDEO}`, channel_id: 'UC123' }),
      subtitle_type: 'manual',
      source: 'captions',
      credits_used: 1,
    });
    expect(body.results[1]).toEqual({
      success: false,
      video_id: ID_B,
      url: url(ID_B),
      error_code: 'VIDEO_NOT_FOUND',
      error_message: `Video ${ID_B} was not found or is unavailable.`,
      credits_used: 0,
    });
    expect(body.results[2]).toMatchObject({ success: false, video_id: null, error_code: 'INVALID_URL' });
    expect(body.credits_charged).toBe(2);
    expect(body.credits_details).toEqual({ successful: 2, failed: 2, total_attempted: 4 });
    expect(body.rate_limit).toMatchObject({ limit: 100, remaining: 99 });
    expect(body.extracted_at).toBe('2026-03-10T12:00:00.000Z');
    // Reserved the worst case of the 3 video URLs (the INVALID_URL item cannot cost), committed 2,
    // one usage event.
    expect(gw.ledger.reservations).toEqual([
      { id: expect.any(String), accountId: 'acc_free', operation: 'batch', amount: 3, state: 'committed' },
    ]);
    expect(gw.ledger.events).toEqual([
      {
        accountId: 'acc_free',
        operation: 'batch',
        credits: 2,
        usage: { successfulItems: 2, attemptedItems: 4 },
      },
    ]);
    expect(gw.ledger.balances.get('acc_free')).toBe(98);
  });

  it('counts as one request', async () => {
    gw = await buildTestGateway();
    const res = await batch({ urls: [VIDEO_URL, url(ID_B), url(ID_C)] });
    expect(res.headers['x-ratelimit-remaining']).toBe('99');
  });

  it('with a document format each success carries format and content, byte-identical to extract', async () => {
    gw = await buildTestGateway();
    const res = await batch({ urls: [VIDEO_URL], format: 'srt' });
    const item = res.json().results[0];
    expect(item.subtitles).toBeUndefined();
    expect(item.format).toBe('srt');
    expect(item.content).toBe(toSrt(transcript(VIDEO).segments));
    parseSrtStrict(item.content);
    const single = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      payload: { url: VIDEO_URL, format: 'srt' },
      headers: { 'x-api-key': KEYS.free },
    });
    expect(single.body).toBe(item.content);
    for (const format of ['vtt', 'txt', 'md'] as const) {
      const one = await gw.app.inject({
        method: 'POST',
        url: '/api/v1/extract',
        payload: { url: VIDEO_URL, format, include_timestamps: false },
        headers: { 'x-api-key': KEYS.free },
      });
      const many = await batch({ urls: [VIDEO_URL], format, include_timestamps: false });
      expect(many.json().results[0]).toMatchObject({ format, content: one.body });
    }
  });

  it('plain-text json items carry text and segment_count', async () => {
    gw = await buildTestGateway();
    const item = (await batch({ urls: [VIDEO_URL], include_timestamps: false })).json().results[0];
    expect(item).toMatchObject({ text: 'Hello world Second line', segment_count: 2 });
    expect(item.subtitles).toBeUndefined();
  });

  it('items not finished by the deadline are TIMEOUT; the rest are returned on time', async () => {
    gw = await buildTestGateway({ env: { BATCH_TIMEOUT_MS: '300', FANOUT_MIN_ITEM_TIMEOUT_MS: '50' } });
    const aborted: string[] = [];
    gw.backends.handlers.getTranscript = async (req, options) => {
      if (req.videoId === ID_B) {
        options?.signal?.addEventListener('abort', () => aborted.push(req.videoId));
        return new Promise(() => {}); // never answers
      }
      return transcript(req.videoId);
    };
    const started = performance.now();
    const res = await batch({ urls: [VIDEO_URL, url(ID_B)] });
    const elapsed = performance.now() - started;
    expect(res.statusCode).toBe(200);
    expect(res.json().results[1]).toMatchObject({ success: false, video_id: ID_B, error_code: 'TIMEOUT' });
    expect(res.json().results[0].success).toBe(true);
    expect(res.json().credits_charged).toBe(1);
    expect(aborted).toEqual([ID_B]);
    expect(elapsed).toBeLessThan(5_000);
    // per-item budget: max(300 / 2, 50) = 150 ms, passed to the backend as the call deadline
    expect(gw.backends.calls[0]?.options?.deadlineMs).toBe(150);
  });

  it('internal item failures do not leak their message', async () => {
    gw = await buildTestGateway();
    gw.backends.handlers.getTranscript = async () => {
      throw new Error('mongodb://admin:hunter2@db');
    };
    const res = await batch({ urls: [VIDEO_URL] });
    expect(res.json().results[0]).toMatchObject({ success: false, error_code: 'INTERNAL_ERROR' });
    expect(res.body).not.toContain('hunter2');
    expect(res.json().credits_charged).toBe(0);
    expect(gw.ledger.events).toEqual([]);
    expect(gw.ledger.balances.get('acc_free')).toBe(100);
  });

  it.each([
    [{ urls: [] }, 'at least 1 item'],
    [{ urls: Array.from({ length: 11 }, () => VIDEO_URL) }, 'at most 10 items'],
    [{ urls: [VIDEO_URL], force_refresh: true }, "unknown field 'force_refresh'"],
    [{ urls: [1] }, 'body.urls.0 must be string'],
    [{ url: VIDEO_URL }, 'body.urls is required'],
  ])('rejects %j with 400 INVALID_REQUEST', async (payload, message) => {
    gw = await buildTestGateway();
    const res = await batch(payload);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('INVALID_REQUEST');
    expect(res.json().error.message).toContain(message);
  });

  it('402 when the balance is below one credit per URL; nothing is extracted', async () => {
    gw = await buildTestGateway({ balances: { acc_free: 2 } });
    const res = await batch({ urls: [VIDEO_URL, url(ID_B), url(ID_C)] });
    expect(res.statusCode).toBe(402);
    expect(res.json().error).toMatchObject({ code: 'INSUFFICIENT_CREDITS', required: 3, available: 2 });
    expect(gw.backends.calls).toHaveLength(0);
  });

  it('invalid include in a batch is INVALID_INCLUDE', async () => {
    gw = await buildTestGateway();
    const res = await batch({ urls: [VIDEO_URL], include: ['likes'] });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('INVALID_INCLUDE');
  });
});

describe('GET /api/v1/playlist', () => {
  const PLAYLIST_URL = 'https://www.youtube.com/playlist?list=PLabcdef123';
  const get = (query: string, key: string = KEYS.free) =>
    gw.app.inject({ method: 'GET', url: `/api/v1/playlist?${query}`, headers: { 'x-api-key': key } });

  it('chunking.* parameters: every successful item carries the chunks extract gives; bad ones are 400', async () => {
    gw = await buildTestGateway();
    gw.backends.handlers.getPlaylist = async (req) => ({
      playlistId: req.playlistId,
      title: 'My list',
      uploader: 'Uploader',
      totalVideos: 2,
      videoIds: [VIDEO, ID_B],
    });
    gw.backends.handlers.getTranscript = async (req) => {
      if (req.videoId === ID_B) throw appError('NO_SUBTITLES', `Video ${ID_B} has no subtitles.`);
      return transcript(req.videoId);
    };
    const list = encodeURIComponent(PLAYLIST_URL);
    const res = await get(`url=${list}&chunking.max_tokens=16&chunking.split=none`);
    expect(res.statusCode, res.body).toBe(200);
    const [ok, failed] = res.json().results;
    expect(failed).not.toHaveProperty('chunks');
    expect(ok.chunks.length).toBeGreaterThan(0);
    const extract = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      payload: { url: VIDEO_URL, chunking: { max_tokens: 16, split: 'none' } },
      headers: { 'x-api-key': KEYS.free },
    });
    expect(ok.chunks).toEqual(extract.json().chunks);
    // Without any chunking.* parameter: no chunks.
    const plain = await get(`url=${list}`);
    expect(plain.json().results[0]).not.toHaveProperty('chunks');
    for (const bad of [
      'chunking.max_tokens=8',
      'chunking.split=pages',
      'chunking.max_tokens=100&chunking.overlap_tokens=51',
      'chunking.max_tokens=100&format=srt',
    ]) {
      const r = await get(`url=${list}&${bad}`);
      expect(r.statusCode, bad).toBe(400);
      expect(r.json().error.code, bad).toBe('INVALID_REQUEST');
    }
    const overlap = await get(`url=${list}&chunking.max_tokens=100&chunking.overlap_tokens=51`);
    expect(overlap.json().error.message).toContain(
      'chunking.overlap_tokens must be at most max_tokens/2 (50)',
    );
  });

  it('returns playlist, extracted_count, results and credits; reserves max up front', async () => {
    gw = await buildTestGateway();
    gw.backends.handlers.getPlaylist = async (req) => ({
      playlistId: req.playlistId,
      title: 'My list',
      uploader: 'Uploader',
      totalVideos: 40,
      videoIds: [VIDEO, ID_B, ID_C],
    });
    gw.backends.handlers.getTranscript = async (req) => {
      if (req.videoId === ID_C) throw appError('NO_SUBTITLES', `Video ${ID_C} has no subtitles.`);
      return transcript(req.videoId);
    };
    const res = await get(
      `url=${encodeURIComponent(PLAYLIST_URL)}&max=3&include=tags,view_count&language=de`,
    );
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.playlist).toEqual({ title: 'My list', uploader: 'Uploader', total_videos: 40 });
    expect(body.extracted_count).toBe(3);
    expect(body.results.map((r: { video_id: string; success: boolean }) => [r.video_id, r.success])).toEqual([
      [VIDEO, true],
      [ID_B, true],
      [ID_C, false],
    ]);
    expect(body.results[2]).toMatchObject({
      error_code: 'NO_SUBTITLES',
      url: `https://www.youtube.com/watch?v=${ID_C}`,
    });
    expect(body.results[0].metadata).toHaveProperty('tags');
    expect(body.results[0].metadata).toHaveProperty('view_count');
    expect(body.credits_charged).toBe(2);
    expect(body.credits_details).toEqual({ successful: 2, failed: 1, total_attempted: 3 });
    expect(gw.backends.calls[0]).toMatchObject({
      method: 'getPlaylist',
      request: { playlistId: 'PLabcdef123', maxVideos: 3 },
    });
    expect(gw.backends.calls[1]?.request).toMatchObject({ language: 'de', include: ['tags', 'view_count'] });
    // per-video budget: max(120 s / 3, 10 s) = 40 s
    expect(gw.backends.calls[1]?.options?.deadlineMs).toBe(40_000);
    expect(gw.ledger.reservations[0]).toMatchObject({ amount: 3, state: 'committed' });
  });

  it('defaults max to 10 and uses the 10 s floor per video', async () => {
    gw = await buildTestGateway();
    const ids = Array.from({ length: 25 }, (_, i) => `video${String(i).padStart(6, '0')}`);
    gw.backends.handlers.getPlaylist = async (req) => ({
      playlistId: req.playlistId,
      title: 't',
      uploader: 'u',
      totalVideos: 25,
      videoIds: ids.slice(0, req.maxVideos),
    });
    const res = await get(`url=${encodeURIComponent(PLAYLIST_URL)}`);
    expect(res.json().extracted_count).toBe(10);
    expect(gw.backends.calls[0]?.request).toMatchObject({ maxVideos: 10 });
    const big = await get(`url=${encodeURIComponent(PLAYLIST_URL)}&max=25`);
    expect(big.json().extracted_count).toBe(25);
    expect(gw.backends.calls.at(-1)?.options?.deadlineMs).toBe(10_000);
  });

  it('accepts a watch URL carrying list=', async () => {
    gw = await buildTestGateway();
    gw.backends.handlers.getPlaylist = async (req) => ({
      playlistId: req.playlistId,
      title: 't',
      uploader: 'u',
      totalVideos: 0,
      videoIds: [],
    });
    const res = await get(`url=${encodeURIComponent(`${VIDEO_URL}&list=PLxyz12345`)}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ extracted_count: 0, results: [], credits_charged: 0 });
    expect(gw.ledger.balances.get('acc_free')).toBe(100);
  });

  it('an unknown playlist is 404 PLAYLIST_NOT_FOUND and the reservation is released', async () => {
    gw = await buildTestGateway();
    gw.backends.handlers.getPlaylist = async () => {
      throw appError('PLAYLIST_NOT_FOUND', 'Playlist PLabcdef123 was not found or is private.');
    };
    const res = await get(`url=${encodeURIComponent(PLAYLIST_URL)}`);
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('PLAYLIST_NOT_FOUND');
    // Nothing was reserved: the listing failed before any extraction could cost.
    expect(gw.ledger.reservations).toEqual([]);
    expect(gw.ledger.balances.get('acc_free')).toBe(100);
  });

  it('a playlist shorter than max needs credits for its videos only', async () => {
    gw = await buildTestGateway({ balances: { acc_free: 2 } });
    gw.backends.handlers.getPlaylist = async (req) => ({
      playlistId: req.playlistId,
      title: 'Two',
      uploader: 'U',
      totalVideos: 2,
      videoIds: ['videoAAAAAA', 'videoBBBBBB'],
    });
    const res = await get(`url=${encodeURIComponent(PLAYLIST_URL)}&max=25`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().credits_charged).toBe(2);
    expect(gw.ledger.reservations[0]).toMatchObject({ amount: 2, state: 'committed' });
  });

  it('a batch needs no credit for URLs that are not video URLs', async () => {
    gw = await buildTestGateway({ balances: { acc_free: 1 } });
    const res = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/batch',
      payload: { urls: [VIDEO_URL, 'https://example.com/a', 'not a url'] },
      headers: { 'x-api-key': KEYS.free },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().credits_charged).toBe(1);
    expect(gw.ledger.reservations[0]).toMatchObject({ amount: 1, state: 'committed' });
  });

  it.each([
    ['max=0', 'INVALID_REQUEST', 'query.max must be >= 1'],
    ['max=26', 'INVALID_REQUEST', 'query.max must be <= 25'],
    ['max=abc', 'INVALID_REQUEST', 'query.max must be integer'],
    ['include_timestamps=maybe', 'INVALID_REQUEST', 'query.include_timestamps must be boolean'],
    ['format=doc', 'INVALID_REQUEST', 'query.format must be one of'],
    ['include=tags,bogus', 'INVALID_INCLUDE', 'bogus'],
    ['extra=1', 'INVALID_REQUEST', "unknown field 'extra'"],
  ])('%s is 400 %s', async (query, code, message) => {
    gw = await buildTestGateway();
    const res = await get(`url=${encodeURIComponent(PLAYLIST_URL)}&${query}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe(code);
    expect(res.json().error.message).toContain(message);
  });

  it('a missing url is INVALID_REQUEST and a video URL is INVALID_URL', async () => {
    gw = await buildTestGateway();
    expect((await get('max=2')).json().error.code).toBe('INVALID_REQUEST');
    expect((await get(`url=${encodeURIComponent(VIDEO_URL)}`)).json().error.code).toBe('INVALID_URL');
  });
});
