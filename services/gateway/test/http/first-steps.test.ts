/**
 * What a newcomer meets first (docs/api.md "Where to start" and "Errors"): the bare origin leads to
 * the reference, a mistyped route names the operation that was probably meant, and a URL the API
 * does not accept (above all a bare video id) is answered with a form it does accept.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KEYS, VIDEO, buildTestGateway } from './support.ts';
import type { TestGateway } from './support.ts';
import { jobsGateway } from './jobs-support.ts';

let gw: TestGateway;
beforeEach(async () => {
  gw = await buildTestGateway();
});
afterEach(async () => {
  await gw.app.close();
});

describe('GET /', () => {
  it('redirects a browser to the reference and tells curl where everything is', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html' } });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/docs/');
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = res.json();
    expect(body).toMatchObject({
      version: '1.2.3',
      links: {
        docs: '/docs',
        openapi: '/openapi.json',
        llms_txt: '/llms.txt',
        errors: '/docs/errors',
        health: '/health',
      },
    });
    expect(body.message).toContain('/openapi.json');
    // Every link leads somewhere, and the redirect lands on the reference page itself.
    for (const link of [...(Object.values(body.links) as string[]), res.headers.location as string]) {
      const target = await gw.app.inject({ method: 'GET', url: link });
      expect(target.statusCode, link).toBeLessThan(400);
    }
    expect((await gw.app.inject({ method: 'GET', url: '/docs/' })).statusCode).toBe(200);
    // The same for curl's Accept: */*, and HEAD answers the redirect without the body.
    expect((await gw.app.inject({ method: 'GET', url: '/' })).headers.location).toBe('/docs/');
    const head = await gw.app.inject({ method: 'HEAD', url: '/' });
    expect(head.statusCode).toBe(302);
    expect(head.body).toBe('');
  });
});

describe('route 404s suggest the nearest operation', () => {
  it.each([
    ['POST', '/api/v1/extracts', 'POST', '/api/v1/extract'],
    ['GET', '/api/v1/extracts', 'POST', '/api/v1/extract'],
    ['POST', '/api/v2/extract', 'POST', '/api/v1/extract'],
    ['POST', '/api/extract', 'POST', '/api/v1/extract'],
    ['POST', '/API/V1/BATCH/', 'POST', '/api/v1/batch'],
    ['GET', '/api/v1/playlists?url=x', 'GET', '/api/v1/playlist'],
    ['POST', '/api/v1/summary', 'POST', '/api/v1/summarize'],
    ['GET', '/api/v1/comment', 'GET', '/api/v1/comments'],
    ['POST', '/api/v1/comments/analyse', 'POST', '/api/v1/comments/analyze'],
    ['POST', '/api/v1/webhook/secret', 'POST', '/api/v1/webhooks/secret'],
  ])('%s %s → %s %s', async (method, url, meantMethod, meantPath) => {
    const res = await gw.app.inject({ method: method as 'GET', url, headers: { 'x-api-key': KEYS.free } });
    expect(res.statusCode).toBe(404);
    const { error } = res.json();
    // The catalogue's code for unknown routes, the suggestion in the message and typed beside it.
    expect(error.code).toBe('NOT_FOUND');
    expect(error.message).toContain(`Did you mean ${meantMethod} ${meantPath}?`);
    expect(error.suggestion).toEqual({ method: meantMethod, path: meantPath });
    expect(error.request_id).toBe(res.headers['x-request-id']);
  });

  it('a job route with its id, when the gateway runs jobs (and not when it does not)', async () => {
    const url = '/api/v1/jobs/job_abc/result';
    const without = (await gw.app.inject({ method: 'GET', url })).json().error;
    expect(JSON.stringify(without.suggestion ?? null)).not.toContain('jobs');
    const h = await jobsGateway();
    const res = await h.app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.suggestion).toEqual({ method: 'GET', path: '/api/v1/jobs/{job_id}/results' });
  });

  it('nothing near: no suggestion, a pointer to the reference', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/wp-admin/setup-config.php' });
    expect(res.statusCode).toBe(404);
    const { error } = res.json();
    expect(error.code).toBe('NOT_FOUND');
    expect(error.message).toBe(
      'No route GET /wp-admin/setup-config.php. The operations are listed at /docs.',
    );
    expect(error).not.toHaveProperty('suggestion');
  });

  it('a 405 on a path with one method suggests that method, with Allow', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/api/v1/extract' });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('POST');
    const { error } = res.json();
    expect(error.code).toBe('METHOD_NOT_ALLOWED');
    expect(error.message).toContain('Did you mean POST /api/v1/extract?');
    expect(error.suggestion).toEqual({ method: 'POST', path: '/api/v1/extract' });
  });
});

describe('INVALID_URL shows an accepted form', () => {
  const extract = (url: string) =>
    gw.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      payload: { url },
      headers: { 'x-api-key': KEYS.free },
    });

  it('a bare video id: says it is an id and gives the watch URL to send', async () => {
    const res = await extract(VIDEO);
    expect(res.statusCode).toBe(400);
    const { error } = res.json();
    expect(error.code).toBe('INVALID_URL');
    expect(error.message).toContain(`${VIDEO} is a video id, not a URL`);
    expect(error.message).toContain(`https://www.youtube.com/watch?v=${VIDEO}`);
    expect(error.suggested_url).toBe(`https://www.youtube.com/watch?v=${VIDEO}`);
    expect(gw.backends.calls).toHaveLength(0);
  });

  it('a video URL without its scheme: the same, with the scheme', async () => {
    const { error } = (await extract(`youtube.com/shorts/${VIDEO}`)).json();
    expect(error.code).toBe('INVALID_URL');
    expect(error.message).toContain('no scheme');
    expect(error.suggested_url).toBe(`https://www.youtube.com/watch?v=${VIDEO}`);
  });

  it.each(['https://example.com/watch?v=dQw4w9WgXcQ', 'dQw4w9WgXc', 'not a url'])(
    '%s: the message shows the accepted forms',
    async (url) => {
      const { error } = (await extract(url)).json();
      expect(error.code).toBe('INVALID_URL');
      expect(error.message).toContain('https://www.youtube.com/watch?v=<11-character id>');
      expect(error.message).toContain('youtu.be/<id>');
      expect(error).not.toHaveProperty('suggested_url');
    },
  );

  it('the same help in batch items and on validate', async () => {
    const batch = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/batch',
      payload: { urls: [VIDEO] },
      headers: { 'x-api-key': KEYS.free },
    });
    expect(batch.json().results[0]).toMatchObject({
      success: false,
      error_code: 'INVALID_URL',
      error_message: expect.stringContaining(`https://www.youtube.com/watch?v=${VIDEO}`),
    });
    const validate = await gw.app.inject({ method: 'GET', url: `/api/v1/validate?url=${VIDEO}` });
    expect(validate.statusCode).toBe(400);
    expect(validate.json().error.suggested_url).toBe(`https://www.youtube.com/watch?v=${VIDEO}`);
  });

  it('a playlist URL that is not one shows the playlist form', async () => {
    const res = await gw.app.inject({
      method: 'GET',
      url: '/api/v1/playlist?url=https%3A%2F%2Fexample.com',
      headers: { 'x-api-key': KEYS.free },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toContain('https://www.youtube.com/playlist?list=<playlist id>');
  });
});
