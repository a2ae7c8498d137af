/**
 * The extract micro-cache seen from outside: a hit answers without the extractor, with the bytes of
 * an uncached answer the extractor served from its own cache, and is counted against the daily limit
 * and charged exactly like a miss.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_PRICING } from '@subx/credits';
import { KEYS, VIDEO, VIDEO_URL, buildTestGateway, transcript } from './support.ts';
import type { TestGateway } from './support.ts';

const opened: TestGateway[] = [];
async function gateway(options: Parameters<typeof buildTestGateway>[0] = {}) {
  const gw = await buildTestGateway(options);
  opened.push(gw);
  return gw;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((gw) => gw.app.close()));
});

const extract = (gw: TestGateway, body: object, headers: Record<string, string> = {}) =>
  gw.app.inject({
    method: 'POST',
    url: '/api/v1/extract',
    payload: body,
    headers: { 'x-api-key': KEYS.free, ...headers },
  });
const transcriptCalls = (gw: TestGateway) => gw.backends.calls.filter((c) => c.method === 'getTranscript');

describe('extract micro-cache', () => {
  it('answers a repeated request without the extractor, byte for byte as the uncached path', async () => {
    const cachedGw = await gateway();
    const uncachedGw = await gateway({ env: { EXTRACT_CACHE_MAX_BYTES: '0' } });
    // The uncached gateway's extractor answers from its own cache, as it would the second time.
    let first = true;
    uncachedGw.backends.handlers.getTranscript = async (req) => {
      const cached = !first;
      first = false;
      return transcript(req.videoId, { cached, translatedFrom: 'de' });
    };
    cachedGw.backends.handlers.getTranscript = async (req) =>
      transcript(req.videoId, { translatedFrom: 'de' });

    for (const body of [
      { url: VIDEO_URL, include: ['chapters', 'tags'] },
      { url: VIDEO_URL, include: ['chapters', 'tags'], include_timestamps: false },
      { url: VIDEO_URL, format: 'srt' },
      { url: VIDEO_URL, format: 'md', include_timestamps: false },
    ]) {
      first = true;
      const calls = transcriptCalls(cachedGw).length;
      const missA = await extract(cachedGw, body);
      const missB = await extract(uncachedGw, body);
      expect(missA.body).toBe(
        missB.body.replaceAll(
          missB.headers['x-request-id'] as string,
          missA.headers['x-request-id'] as string,
        ),
      );
      const headers = { 'x-request-id': `same-id-${String(body.format)}-${String(body.include_timestamps)}` };
      const hit = await extract(cachedGw, body, headers);
      const uncached = await extract(uncachedGw, body, headers);
      expect(transcriptCalls(cachedGw).length, JSON.stringify(body)).toBe(calls + 1);
      expect(hit.statusCode).toBe(200);
      expect(hit.headers['content-type']).toBe(uncached.headers['content-type']);
      expect(hit.body).toBe(uncached.body);
      if (!body.format)
        expect(hit.json()).toMatchObject({ cached: true, request_id: headers['x-request-id'] });
    }
    expect(JSON.parse((await extract(cachedGw, { url: VIDEO_URL })).body)).toMatchObject({ cached: false });
  });

  it('counts every hit against the daily limit, and the limit still refuses', async () => {
    const gw = await gateway({ dailyLimits: { free: 3 } });
    const remaining: unknown[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await extract(gw, { url: VIDEO_URL });
      expect(res.statusCode).toBe(200);
      remaining.push(res.json().rate_limit.remaining);
      expect(res.headers['x-ratelimit-remaining']).toBe(String(2 - i));
    }
    expect(remaining).toEqual([2, 1, 0]);
    expect(transcriptCalls(gw)).toHaveLength(1);
    const refused = await extract(gw, { url: VIDEO_URL });
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.code).toBe('RATE_LIMITED');
    expect(gw.access.used.get('acc_free')).toBe(3);
  });

  it('charges a priced extract on a hit as on a miss', async () => {
    const pricing = { ...DEFAULT_PRICING, prices: { ...DEFAULT_PRICING.prices, extract: 2 } };
    const gw = await gateway({ deps: { pricing }, balances: { acc_free: 5 } });
    expect((await extract(gw, { url: VIDEO_URL })).statusCode).toBe(200);
    expect((await extract(gw, { url: VIDEO_URL })).statusCode).toBe(200);
    expect(transcriptCalls(gw)).toHaveLength(1);
    expect(gw.ledger.events.map((e) => e.credits)).toEqual([2, 2]);
    const broke = await extract(gw, { url: VIDEO_URL });
    expect(broke.statusCode).toBe(402);
    expect(gw.ledger.balances.get('acc_free')).toBe(1);
  });

  it('force_refresh asks the extractor and its answer replaces the entry', async () => {
    const gw = await gateway();
    let title = 'first';
    gw.backends.handlers.getTranscript = async (req) =>
      transcript(req.videoId, { metadata: { ...transcript(req.videoId).metadata, title } });
    expect((await extract(gw, { url: VIDEO_URL })).json().metadata.title).toBe('first');
    title = 'second';
    expect((await extract(gw, { url: VIDEO_URL })).json().metadata.title).toBe('first');
    const refreshed = await extract(gw, { url: VIDEO_URL, force_refresh: true });
    expect(refreshed.json()).toMatchObject({ cached: false, metadata: { title: 'second' } });
    expect(transcriptCalls(gw).map((c) => (c.request as { forceRefresh: boolean }).forceRefresh)).toEqual([
      false,
      true,
    ]);
    expect((await extract(gw, { url: VIDEO_URL })).json()).toMatchObject({
      cached: true,
      metadata: { title: 'second' },
    });
    expect(transcriptCalls(gw)).toHaveLength(2);
  });

  it('asks the extractor again once the TTL has passed, and never keeps errors', async () => {
    const gw = await gateway({ env: { EXTRACT_CACHE_TTL_MS: '5000' } });
    await extract(gw, { url: VIDEO_URL });
    gw.clock.advance(4_000);
    await extract(gw, { url: VIDEO_URL });
    expect(transcriptCalls(gw)).toHaveLength(1);
    gw.clock.advance(1_500);
    gw.backends.handlers.getTranscript = async () => {
      throw new Error('extractor down');
    };
    expect((await extract(gw, { url: VIDEO_URL })).statusCode).toBe(500);
    expect((await extract(gw, { url: VIDEO_URL })).statusCode).toBe(500);
    expect(transcriptCalls(gw)).toHaveLength(3);
  });

  it('keeps no answer without the extractor fetch time (it would carry the request time)', async () => {
    const gw = await gateway();
    gw.backends.handlers.getTranscript = async (req) => transcript(req.videoId, { fetchedAt: '' });
    await extract(gw, { url: VIDEO_URL });
    await extract(gw, { url: `https://youtu.be/${VIDEO}` });
    expect(transcriptCalls(gw)).toHaveLength(2);
  });
});
