import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KEYS, VIDEO_URL, buildTestGateway } from './support.ts';
import type { TestGateway } from './support.ts';

let gw: TestGateway;
beforeEach(async () => {
  gw = await buildTestGateway({
    dailyLimits: { free: 3 },
    balances: { acc_free: 100, acc_pro: 0, acc_ent: 1000 },
  });
});
afterEach(async () => {
  await gw.app.close();
});

function expectErrorShape(body: Record<string, unknown>, code: string, requestId: unknown) {
  expect(body).toEqual({
    error: expect.objectContaining({
      code,
      message: expect.any(String),
      docs_url: `/docs/errors#${code.toLowerCase().replaceAll('_', '-')}`,
      request_id: requestId,
      retryable: expect.any(Boolean),
    }),
  });
}

describe('authentication and the order of checks', () => {
  it.each([
    ['missing', undefined],
    ['wrong', 'sxk_v1_wrongwrongwrongwrongwrongwrong12'],
    ['garbage', 'x'],
  ])('%s key is 401 UNAUTHORIZED with the documented body', async (_name, key) => {
    const res = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      payload: { url: VIDEO_URL },
      headers: key ? { 'x-api-key': key } : {},
    });
    expect(res.statusCode).toBe(401);
    expectErrorShape(res.json(), 'UNAUTHORIZED', res.headers['x-request-id']);
    // Says which headers and which key format it expected (docs/api.md "Authentication and keys"),
    // and challenges (RFC 9110).
    expect(res.json().error.message).toMatch(/missing or invalid/i);
    expect(res.json().error.message).toContain('X-API-Key: <key>');
    expect(res.json().error.message).toContain('Authorization: Bearer <key>');
    expect(res.json().error.message).toContain('sxk_v1_');
    expect(res.headers['www-authenticate']).toBe('Bearer realm="subx"');
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    expect(gw.backends.calls).toHaveLength(0);
  });

  it('the key as Authorization: Bearer is admitted and counted like X-API-Key (scheme case-insensitive)', async () => {
    for (const authorization of [`Bearer ${KEYS.free}`, `bearer  ${KEYS.free}`]) {
      const res = await gw.app.inject({
        method: 'POST',
        url: '/api/v1/extract',
        payload: { url: VIDEO_URL },
        headers: { authorization },
      });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('3');
    }
    expect(gw.access.used.get('acc_free')).toBe(2);
  });

  it.each([
    ['Basic credentials', `Basic ${Buffer.from(`u:${KEYS.free}`).toString('base64')}`],
    ['Bearer without a token', 'Bearer '],
    ['a wrong Bearer key', 'Bearer sxk_v1_wrongwrongwrongwrongwrongwrong12'],
  ])('%s is 401 with WWW-Authenticate', async (_name, authorization) => {
    const res = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      payload: { url: VIDEO_URL },
      headers: { authorization },
    });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="subx"');
    expect(gw.backends.calls).toHaveLength(0);
  });

  it('401 comes before body validation, 413 and 415', async () => {
    const bad = await gw.app.inject({ method: 'POST', url: '/api/v1/extract', payload: { nope: true } });
    expect(bad.statusCode).toBe(401);
    const big = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      payload: JSON.stringify({ url: 'x'.repeat(70_000) }),
      headers: { 'content-type': 'application/json' },
    });
    expect(big.statusCode).toBe(401);
  });

  it('403 TIER_REQUIRED (naming the tier) comes before validation and carries rate-limit headers', async () => {
    const res = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/summarize',
      payload: { not_a_field: 1 },
      headers: { 'x-api-key': KEYS.free },
    });
    expect(res.statusCode).toBe(403);
    expectErrorShape(res.json(), 'TIER_REQUIRED', res.headers['x-request-id']);
    expect(res.json().error.message).toContain('pro');
    expect(res.headers['x-ratelimit-limit']).toBe('3');
  });

  it('429 RATE_LIMITED with Retry-After and headers comes before validation; 400s still count', async () => {
    for (let i = 0; i < 3; i += 1) {
      const res = await gw.app.inject({
        method: 'POST',
        url: '/api/v1/extract',
        payload: { bogus: 1 },
        headers: { 'x-api-key': KEYS.free },
      });
      expect(res.statusCode).toBe(400);
      expect(res.headers['x-ratelimit-remaining']).toBe(String(2 - i));
    }
    const res = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      payload: { bogus: 1 },
      headers: { 'x-api-key': KEYS.free },
    });
    expect(res.statusCode).toBe(429);
    expectErrorShape(res.json(), 'RATE_LIMITED', res.headers['x-request-id']);
    expect(res.json().error.retryable).toBe(true);
    expect(res.headers['retry-after']).toBe('3600');
    expect(res.headers['x-ratelimit-remaining']).toBe('0');
    expect(res.headers['x-ratelimit-reset']).toBe('2026-03-11T00:00:00.000Z');
  });

  it('400 validation comes before 402 INSUFFICIENT_CREDITS; 402 names required and available', async () => {
    const invalid = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/comments/analyze',
      payload: { video_url: VIDEO_URL, sample_size: 5 },
      headers: { 'x-api-key': KEYS.pro },
    });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().error.message).toContain('body.sample_size must be >= 10');
    // The AI service is only asked whether the analysis is cached (it is not): no work before 402.
    gw.backends.handlers.analyzeComments = async (req) => {
      if (!req.cachedOnly) throw new Error('analysis started without credits');
      return {
        videoId: req.videoId,
        sentiment: 0,
        themes: [],
        keyQuotes: [],
        sampleSize: 0,
        totalComments: 0n,
        cached: false,
        model: '',
        generatedAt: '',
      };
    };
    const res = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/comments/analyze',
      payload: { video_url: VIDEO_URL },
      headers: { 'x-api-key': KEYS.pro },
    });
    expect(res.statusCode).toBe(402);
    expectErrorShape(res.json(), 'INSUFFICIENT_CREDITS', res.headers['x-request-id']);
    expect(res.json().error).toMatchObject({ required: 3, available: 0 });
    expect(res.headers['x-ratelimit-limit']).toBe('10000');
    expect(gw.backends.calls.map((c) => (c.request as { cachedOnly: boolean }).cachedOnly)).toEqual([true]);
  });

  it('unlimited tiers get rate_limit with null limit/remaining and no X-RateLimit headers', async () => {
    const res = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      payload: { url: VIDEO_URL },
      headers: { 'x-api-key': KEYS.enterprise },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().rate_limit).toMatchObject({ limit: null, remaining: null });
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    expect(res.headers['x-ratelimit-remaining']).toBeUndefined();
  });
});

describe('transport errors', () => {
  const post = (payload: string, contentType = 'application/json') =>
    gw.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      payload,
      headers: { 'x-api-key': KEYS.free, 'content-type': contentType },
    });

  it('malformed JSON is 400 INVALID_REQUEST', async () => {
    const res = await post('{"url": ');
    expect(res.statusCode).toBe(400);
    expectErrorShape(res.json(), 'INVALID_REQUEST', res.headers['x-request-id']);
    expect(res.json().error.message).toBe('The request body is not valid JSON.');
  });

  it('an empty JSON body is 400 INVALID_REQUEST', async () => {
    const res = await post('');
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('INVALID_REQUEST');
  });

  it('a body over 64 KB is 413 PAYLOAD_TOO_LARGE in the error shape', async () => {
    const res = await post(JSON.stringify({ url: VIDEO_URL, language: 'x'.repeat(65_536) }));
    expect(res.statusCode).toBe(413);
    expectErrorShape(res.json(), 'PAYLOAD_TOO_LARGE', res.headers['x-request-id']);
    const atLimit = await post(JSON.stringify({ url: VIDEO_URL, pad: 'x' }).padEnd(65_536, ' '));
    expect(atLimit.statusCode).toBe(400); // read and validated (unknown field), not rejected for size
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/xml'])(
    'a %s body is 415 UNSUPPORTED_MEDIA_TYPE',
    async (type) => {
      const res = await post(`url=${VIDEO_URL}`, type);
      expect(res.statusCode).toBe(415);
      expectErrorShape(res.json(), 'UNSUPPORTED_MEDIA_TYPE', res.headers['x-request-id']);
    },
  );

  it('JSON with a charset parameter is accepted', async () => {
    const res = await post(JSON.stringify({ url: VIDEO_URL }), 'application/json; charset=utf-8');
    expect(res.statusCode).toBe(200);
  });

  it('unknown routes are 404 NOT_FOUND', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/api/v2/extract' });
    expect(res.statusCode).toBe(404);
    expectErrorShape(res.json(), 'NOT_FOUND', res.headers['x-request-id']);
  });

  it.each([
    ['GET', '/api/v1/extract', 'POST'],
    ['DELETE', '/api/v1/batch', 'POST'],
    ['POST', '/api/v1/playlist', 'GET'],
    ['PUT', '/api/v1/validate?url=x', 'GET'],
    ['HEAD', '/api/v1/comments', 'GET'],
    ['GET', '/api/v1/comments/analyze', 'POST'],
    ['POST', '/health', 'GET, HEAD'],
  ])('%s %s is 405 METHOD_NOT_ALLOWED with Allow: %s', async (method, url, allow) => {
    const res = await gw.app.inject({ method: method as 'GET', url });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe(allow);
    if (method !== 'HEAD') expectErrorShape(res.json(), 'METHOD_NOT_ALLOWED', res.headers['x-request-id']);
  });
});

describe('request ids', () => {
  it('generates one per request and returns it in the header and the body', async () => {
    const a = await gw.app.inject({ method: 'GET', url: '/nope' });
    const b = await gw.app.inject({ method: 'GET', url: '/nope' });
    expect(a.headers['x-request-id']).toMatch(/^req_[0-9a-f-]{36}$/);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
    expect(a.json().error.request_id).toBe(a.headers['x-request-id']);
  });

  it('honours a well-formed incoming X-Request-Id and replaces a malformed one', async () => {
    const kept = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      payload: { url: VIDEO_URL },
      headers: { 'x-api-key': KEYS.free, 'x-request-id': 'client-trace:1234.abc' },
    });
    expect(kept.headers['x-request-id']).toBe('client-trace:1234.abc');
    expect(kept.json().request_id).toBe('client-trace:1234.abc');
    expect(gw.backends.calls[0]?.options?.requestId).toBe('client-trace:1234.abc');
    for (const bad of ['short', 'has space in it', 'x'.repeat(129), 'inject\r\nheader']) {
      const res = await gw.app.inject({ method: 'GET', url: '/nope', headers: { 'x-request-id': bad } });
      expect(res.headers['x-request-id']).toMatch(/^req_/);
    }
  });

  it('every response carries X-Request-Id: docs, health, validation errors', async () => {
    gw.backends.handlers.validateVideo = async () => {
      throw new Error('boom');
    };
    for (const url of [
      '/docs',
      '/openapi.json',
      '/docs/errors',
      '/health',
      '/health/live',
      '/api/v1/validate',
    ]) {
      const res = await gw.app.inject({ method: 'GET', url });
      expect(res.headers['x-request-id'], url).toBeTruthy();
    }
  });
});

describe('idempotency', () => {
  it('a retried batch with the same Idempotency-Key replays the response and is charged once', async () => {
    const request = {
      method: 'POST' as const,
      url: '/api/v1/batch',
      payload: { urls: [VIDEO_URL] },
      headers: { 'x-api-key': KEYS.enterprise, 'idempotency-key': 'retry-1' },
    };
    const first = await gw.app.inject(request);
    const second = await gw.app.inject(request);
    expect(first.statusCode).toBe(200);
    expect(second.statusCode).toBe(200);
    expect(second.body).toBe(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(gw.ledger.events).toHaveLength(1);
    expect(gw.ledger.balances.get('acc_ent')).toBe(999);
    expect(gw.backends.calls).toHaveLength(1);
  });

  it('a retried extract with the same Idempotency-Key replays its bytes, request id included', async () => {
    // Extract answers go out as bytes (a Buffer), not as a string: they are stored for replay too.
    const request = {
      method: 'POST' as const,
      url: '/api/v1/extract',
      payload: { url: VIDEO_URL },
      headers: { 'x-api-key': KEYS.enterprise, 'idempotency-key': 'extract-1' },
    };
    const first = await gw.app.inject(request);
    const second = await gw.app.inject(request);
    expect(first.statusCode).toBe(200);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toBe(first.body);
    expect((second.json() as { request_id: string }).request_id).toBe(first.headers['x-request-id']);
  });

  it('the same key with a different body is 400, and a failed request frees the key', async () => {
    const headers = { 'x-api-key': KEYS.enterprise, 'idempotency-key': 'k-2' };
    gw.backends.handlers.getTranscript = async () => {
      throw new Error('boom');
    };
    const failed = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      payload: { url: VIDEO_URL },
      headers,
    });
    expect(failed.statusCode).toBe(500);
    gw.backends.handlers.getTranscript = async (req) =>
      (await import('./support.ts')).transcript(req.videoId);
    const ok = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      payload: { url: VIDEO_URL },
      headers,
    });
    expect(ok.statusCode).toBe(200);
    const other = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      payload: { url: VIDEO_URL, language: 'de' },
      headers,
    });
    expect(other.statusCode).toBe(400);
    expect(other.json().error.code).toBe('INVALID_REQUEST');
  });
});
