/**
 * Inputs are read as written (docs/decisions.md "Inputs"): video URLs with anything around the id are INVALID_URL,
 * and numbers are never coerced from hex, exponent or padded strings, in the query or the body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, VIDEO, buildTestGateway } from './support.ts';
import type { TestGateway } from './support.ts';

let gw: TestGateway;
beforeAll(async () => {
  gw = await buildTestGateway({ balances: { acc_pro: 1000 } });
});
afterAll(async () => {
  await gw.app.close();
});

const post = (url: string, payload: unknown) =>
  gw.app.inject({ method: 'POST', url, payload: payload as object, headers: { 'x-api-key': KEYS.pro } });

describe('video URLs', () => {
  it.each([
    `https://www.youtube.com/watch/extra?v=${VIDEO}`,
    `https://youtu.be/${VIDEO}/extra`,
    `https://user@youtube.com/watch?v=${VIDEO}`,
    `https://user:secret@www.youtube.com/watch?v=${VIDEO}`,
    `https://www.youtube.com:8080/watch?v=${VIDEO}`,
    `https://youtu.be:443/${VIDEO}`,
    `https://youtu.be/${VIDEO.slice(0, 5)}\t${VIDEO.slice(5)}`,
    `https://youtu.be/${VIDEO}\n`,
    `https://www.youtube.com/watch?v=${VIDEO}\u0000`,
  ])('%j is 400 INVALID_URL on extract, validate, summarize and comments', async (url) => {
    const extract = await post('/api/v1/extract', { url });
    expect(extract.statusCode).toBe(400);
    expect(extract.json().error.code).toBe('INVALID_URL');
    const summarize = await post('/api/v1/summarize', { video_url: url });
    expect(summarize.json().error.code).toBe('INVALID_URL');
    const validate = await gw.app.inject({ url: `/api/v1/validate?url=${encodeURIComponent(url)}` });
    expect(validate.json().error.code).toBe('INVALID_URL');
    const comments = await gw.app.inject({
      url: `/api/v1/comments?url=${encodeURIComponent(url)}`,
      headers: { 'x-api-key': KEYS.pro },
    });
    expect(comments.json().error.code).toBe('INVALID_URL');
  });
});

describe('numbers are not coerced', () => {
  const url = encodeURIComponent(`https://youtu.be/${VIDEO}`);
  it.each(['0x10', '1e1', ' 10', '10 ', '', '+10', '010', '10.0.0'])(
    'query max=%j is 400 INVALID_REQUEST',
    async (max) => {
      const res = await gw.app.inject({
        url: `/api/v1/comments?url=${url}&max=${encodeURIComponent(max)}`,
        headers: { 'x-api-key': KEYS.pro },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({
        code: 'INVALID_REQUEST',
        message: expect.stringContaining('max'),
      });
    },
  );

  it('a plain decimal query number is accepted', async () => {
    gw.backends.handlers.getComments = async (req) => ({
      videoId: req.videoId,
      comments: [],
      commentsDisabled: false,
      cached: false,
      totalCount: 0n,
    });
    const res = await gw.app.inject({
      url: `/api/v1/comments?url=${url}&max=10`,
      headers: { 'x-api-key': KEYS.pro },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(gw.backends.calls.at(-1)?.request).toMatchObject({ max: 10 });
  });

  it.each(['0x10', '1e1', ' 10', '10'])(
    'body sample_size %j (a string) is 400 INVALID_REQUEST',
    async (n) => {
      const res = await post('/api/v1/comments/analyze', {
        video_url: `https://youtu.be/${VIDEO}`,
        sample_size: n,
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('INVALID_REQUEST');
    },
  );

  it('query booleans are exactly true or false', async () => {
    const playlist = (v: string) =>
      gw.app.inject({
        url: `/api/v1/playlist?url=${encodeURIComponent('https://www.youtube.com/playlist?list=PLabc123')}&include_timestamps=${v}`,
        headers: { 'x-api-key': KEYS.pro },
      });
    expect((await playlist('1')).json().error.code).toBe('INVALID_REQUEST');
    expect((await playlist('yes')).json().error.code).toBe('INVALID_REQUEST');
  });
});
