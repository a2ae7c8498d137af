/**
 * Black-box: the real `npm start` launcher (scripts/start-embedded.ts) as a child process, with a
 * fake YouTube upstream, exercised over a real socket. One test per operation, as an API user sees it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeYouTube, videoIds, playlistIds, type FakeYouTube } from '@subx/testing/fake-youtube';
import { startNpmStart, type NpmStartProcess } from './npm-start-process.ts';

const ADMIN_TOKEN = 'system-test-admin-token-0123456789';

let youtube: FakeYouTube;
let system: NpmStartProcess;
let base = '';
let apiKey = '';

// Response bodies are asserted field by field; a loose type keeps the assertions readable.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const json = (res: Response) => res.json() as Promise<Record<string, any>>;
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey, ...headers },
    body: JSON.stringify(body),
  });
const get = (path: string, headers: Record<string, string> = { 'x-api-key': apiKey }) =>
  fetch(`${base}${path}`, { headers });

beforeAll(async () => {
  youtube = await startFakeYouTube();
  system = await startNpmStart({ YOUTUBE_BASE_URL: youtube.url, ADMIN_TOKEN });
  ({ base, apiKey } = system);
}, 90_000);

afterAll(async () => {
  await system?.stop();
  await youtube?.close();
});

describe('npm start over a real socket', () => {
  it('GET /health reports every service ok, also under /api/v1', async () => {
    for (const path of ['/health', '/api/v1/health']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status).toBe(200);
      expect(await json(res)).toMatchObject({
        status: 'ok',
        api_version: 'v1',
        services: { gateway: 'ok', extractor: 'ok', comments: 'ok', ai: 'ok', billing: 'ok' },
      });
    }
  });

  it('POST /api/v1/extract returns subtitles, metadata, rate_limit and request_id; the second call is cached', async () => {
    const body = {
      url: `https://www.youtube.com/watch?v=${videoIds.manualAndAuto}`,
      include: ['like_count'],
    };
    const first = await post('/api/v1/extract', body);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-request-id')).toBeTruthy();
    expect(first.headers.get('x-ratelimit-limit')).toBe('10000');
    const a = await json(first);
    expect(a).toMatchObject({
      video_id: videoIds.manualAndAuto,
      language: 'en',
      subtitle_type: 'manual',
      cached: false,
    });
    expect(a.subtitles.length).toBeGreaterThan(0);
    expect(Object.keys(a.metadata).sort()).toEqual(
      ['channel', 'channel_id', 'duration', 'like_count', 'thumbnail_url', 'title', 'upload_date'].sort(),
    );
    expect(a.rate_limit).toMatchObject({ limit: 10000 });
    expect(typeof a.rate_limit.reset).toBe('number');
    expect(a.request_id).toBe(first.headers.get('x-request-id'));
    const second = await json(await post('/api/v1/extract', body));
    expect(second.cached).toBe(true);
    expect(second.subtitles).toEqual(a.subtitles);
  });

  it('POST /api/v1/extract as vtt is a WebVTT document', async () => {
    const res = await post('/api/v1/extract', {
      url: `https://youtu.be/${videoIds.manualAndAuto}`,
      format: 'vtt',
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/vtt/);
    const text = await res.text();
    expect(text.startsWith('WEBVTT')).toBe(true);
    expect(text).toMatch(/\d{2}:\d{2}:\d{2}\.\d{3} --> \d{2}:\d{2}:\d{2}\.\d{3}/);
  });

  it('errors carry the documented body: no key → 401, private video → 404 VIDEO_UNAVAILABLE', async () => {
    const anon = await fetch(`${base}/api/v1/extract`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: `https://youtu.be/${videoIds.manualAndAuto}` }),
    });
    expect(anon.status).toBe(401);
    expect((await json(anon)).error).toMatchObject({
      code: 'UNAUTHORIZED',
      docs_url: '/docs/errors#unauthorized',
    });
    const priv = await post('/api/v1/extract', { url: `https://youtu.be/${videoIds.private}` });
    expect(priv.status).toBe(404);
    expect((await json(priv)).error).toMatchObject({
      code: 'VIDEO_UNAVAILABLE',
      reason: 'private',
      retryable: false,
    });
  });

  it('GET /api/v1/validate needs no key', async () => {
    const res = await get(
      `/api/v1/validate?url=${encodeURIComponent(`https://youtu.be/${videoIds.autoOnly}`)}`,
      {},
    );
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({
      valid: true,
      has_subtitles: true,
      available_languages: { manual: [], auto_generated: ['en'] },
    });
  });

  it('POST /api/v1/batch answers one item per URL in order and charges successes only', async () => {
    const urls = [
      `https://youtu.be/${videoIds.manualAndAuto}`,
      `https://youtu.be/${videoIds.private}`,
      'https://example.com/nope',
    ];
    const res = await post('/api/v1/batch', { urls });
    expect(res.status).toBe(200);
    const b = await json(res);
    expect(b.results.map((r: { url: string }) => r.url)).toEqual(urls);
    expect(b.results.map((r: { success: boolean }) => r.success)).toEqual([true, false, false]);
    expect(b.results[2]).toMatchObject({ video_id: null, error_code: 'INVALID_URL' });
    expect(b.credits_charged).toBe(1);
    expect(b.credits_details).toEqual({ successful: 1, failed: 2, total_attempted: 3 });
  });

  it('GET /api/v1/playlist extracts the first videos of a playlist', async () => {
    const url = encodeURIComponent(`https://www.youtube.com/playlist?list=${playlistIds.synthetic}`);
    const res = await get(`/api/v1/playlist?url=${url}&max=2`);
    expect(res.status).toBe(200);
    const p = await json(res);
    expect(p.playlist.title).toBeTruthy();
    expect(p.results).toHaveLength(2);
    expect(p.extracted_count).toBe(2);
  });

  it('GET /api/v1/comments returns comments and charges one credit per 500', async () => {
    const res = await get(
      `/api/v1/comments?url=${encodeURIComponent(`https://youtu.be/${videoIds.syntheticComments}`)}&max=5`,
    );
    expect(res.status).toBe(200);
    const c = await json(res);
    expect(c.comments).toHaveLength(5);
    expect(c).toMatchObject({ comment_count: 5, comments_disabled: false, credits_used: 1 });
  });

  it('POST /api/v1/summarize answers with the offline engine and charges by duration', async () => {
    const res = await post('/api/v1/summarize', { video_url: `https://youtu.be/${videoIds.manualAndAuto}` });
    expect(res.status).toBe(200);
    const s = await json(res);
    expect(s.summary.length).toBeGreaterThan(10);
    expect(s.credits_used).toBe(4);
    expect(s.model).toBe('local-extractive');
    expect(s.video_metadata.title).toBeTruthy();
    const again = await json(
      await post('/api/v1/summarize', { video_url: `https://youtu.be/${videoIds.manualAndAuto}` }),
    );
    expect(again).toMatchObject({ cached: true, credits_used: 0 });
  });

  it('POST /api/v1/comments/analyze analyses a sample', async () => {
    const res = await post('/api/v1/comments/analyze', {
      video_url: `https://youtu.be/${videoIds.syntheticComments}`,
      sample_size: 20,
    });
    expect(res.status).toBe(200);
    const a = await json(res);
    expect(['positive', 'negative', 'mixed']).toContain(a.sentiment);
    expect(a.sample_size).toBe(20);
    expect(a.credits_used).toBe(3);
    expect(a.model).toBe('local-lexicon');
  });

  it('the admin API answers 404 on the public port and works on the listener the banner names', async () => {
    const adminUrl = system.adminUrl;
    expect(adminUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(adminUrl).not.toBe(base);
    const auth = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const onPublic = await fetch(`${base}/admin/v1/accounts`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ tier: 'free' }),
    });
    expect(onPublic.status).toBe(404);
    expect((await json(onPublic)).error.code).toBe('NOT_FOUND');
    expect((await fetch(`${base}/admin/v1/accounts/${system.accountId}`, { headers: auth })).status).toBe(
      404,
    );
    const onAdmin = await fetch(`${adminUrl}/admin/v1/accounts/${system.accountId}`, { headers: auth });
    expect(onAdmin.status).toBe(200);
    expect((await json(onAdmin)).account_id).toBe(system.accountId);
  });

  it('the admin API creates a free account whose key is refused on Pro operations', async () => {
    const created = await fetch(`${system.adminUrl}/admin/v1/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tier: 'free' }),
    });
    expect(created.status).toBe(201);
    const account = await json(created);
    expect(account.api_key).toMatch(/^sxk_v1_[A-Za-z0-9]{32}$/);
    const res = await get(
      `/api/v1/comments?url=${encodeURIComponent(`https://youtu.be/${videoIds.syntheticComments}`)}`,
      {
        'x-api-key': account.api_key,
      },
    );
    expect(res.status).toBe(403);
    expect((await json(res)).error.code).toBe('TIER_REQUIRED');
  });
});
