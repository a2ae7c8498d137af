import { createHash } from 'node:crypto';
import { Ajv } from 'ajv';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ERROR_CATALOG, ERROR_CODES, docsUrl } from '@subx/errors';
import type { ErrorCode } from '@subx/errors';
import { documentedErrors } from '../../src/openapi/components.ts';
import { OPERATION_SPECS } from '../../src/openapi/operations.ts';
import { inlined } from './openapi-support.ts';
import { KEYS, VIDEO_URL, appError, buildTestGateway, transcript } from './support.ts';
import type { TestGateway } from './support.ts';

const PLAYLIST_URL = 'https://www.youtube.com/playlist?list=PLXJg25X-OulsVsnvZ7RVtSDW-id9_RzAO';

function check(ajv: Ajv, schema: object, value: unknown) {
  const validate = ajv.compile(schema);
  expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
}

let gw: TestGateway;
beforeEach(async () => {
  gw = await buildTestGateway();
});
afterEach(async () => {
  await gw.app.close();
});

describe('health', () => {
  it.each(['/health', '/api/v1/health'])('%s reports ok with version and every service', async (url) => {
    const res = await gw.app.inject({ method: 'GET', url });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      status: 'ok',
      version: '1.2.3',
      api_version: 'v1',
      services: { gateway: 'ok', extractor: 'ok', comments: 'ok', ai: 'ok', billing: 'ok' },
      platform: 'ok',
    });
  });

  it('degraded (200) with platform unreachable while the extractor reaches the platform no more', async () => {
    gw.backends.platform.reachable = false;
    const res = await gw.app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      status: 'degraded',
      platform: 'unreachable',
      services: { extractor: 'ok' },
    });
    gw.backends.platform.reachable = true;
    expect((await gw.app.inject({ method: 'GET', url: '/health' })).json()).toMatchObject({
      status: 'ok',
      platform: 'ok',
    });
  });

  it('degraded (200) when a secondary service is down, down (503) when the extractor is', async () => {
    gw.backends.healthy.ai = false;
    const degraded = await gw.app.inject({ method: 'GET', url: '/health' });
    expect(degraded.statusCode).toBe(200);
    expect(degraded.json()).toMatchObject({ status: 'degraded', services: { ai: 'down', extractor: 'ok' } });
    gw.backends.healthy.extractor = false;
    gw.backends.extractor.checkHealth = async () => {
      throw new Error('unreachable');
    };
    const down = await gw.app.inject({ method: 'GET', url: '/health' });
    expect(down.statusCode).toBe(503);
    expect(down.json()).toMatchObject({ status: 'down', services: { extractor: 'down', gateway: 'ok' } });
  });

  it('is never rate limited: probes must not see 429', async () => {
    await gw.app.close();
    gw = await buildTestGateway({ ipLimit: 1 });
    for (let i = 0; i < 5; i++) {
      for (const url of ['/health', '/api/v1/health']) {
        expect((await gw.app.inject({ method: 'GET', url })).statusCode).toBe(200);
        expect((await gw.app.inject({ method: 'HEAD', url })).statusCode).toBe(200);
      }
    }
    expect(gw.ipLimiter.counts.size).toBe(0);
  });

  it.each(['/health', '/api/v1/health', '/health/live', '/health/ready'])(
    'HEAD %s answers like GET, without a body',
    async (url) => {
      const res = await gw.app.inject({ method: 'HEAD', url });
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe('');
      expect(res.headers['x-request-id']).toBeDefined();
    },
  );

  it('a dependency check that throws is 503 naming it, never 500 (GET and HEAD)', async () => {
    gw.backends.extractor.checkHealth = () => {
      throw new Error('channel exploded synchronously');
    };
    gw.backends.ai.checkHealth = async () => {
      throw new Error('channel exploded');
    };
    const res = await gw.app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({
      status: 'down',
      services: { gateway: 'ok', extractor: 'down', ai: 'down', comments: 'ok' },
    });
    expect((await gw.app.inject({ method: 'HEAD', url: '/health' })).statusCode).toBe(503);
  });

  it('/health/live and /health/ready (readiness dependency)', async () => {
    expect((await gw.app.inject({ method: 'GET', url: '/health/live' })).json()).toEqual({ status: 'ok' });
    await gw.app.close();
    let ready = false;
    gw = await buildTestGateway({ deps: { readiness: async () => ready } });
    expect((await gw.app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(503);
    ready = true;
    expect((await gw.app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
  });
});

describe('docs', () => {
  it('/openapi.json is OpenAPI 3.1 with every operation, built from the validating schemas', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual(
      [
        '/api/v1/account',
        '/api/v1/account/export',
        '/api/v1/account/retention',
        '/api/v1/audit',
        '/api/v1/batch',
        '/api/v1/comments',
        '/api/v1/comments/analyze',
        '/api/v1/extract',
        '/api/v1/extract.md',
        '/api/v1/extract.srt',
        '/api/v1/extract.txt',
        '/api/v1/extract.vtt',
        '/api/v1/health',
        '/api/v1/jobs',
        '/api/v1/jobs/{job_id}',
        '/api/v1/jobs/{job_id}/results',
        '/api/v1/jobs/{job_id}/chunks',
        '/api/v1/jobs/{job_id}/results/{index}',
        '/api/v1/keys',
        '/api/v1/keys/{key_id}',
        '/api/v1/playlist',
        '/api/v1/search',
        '/api/v1/summarize',
        '/api/v1/validate',
        '/api/v1/watches',
        '/api/v1/watches/{watch_id}',
        '/api/v1/watches/{watch_id}/run',
        '/api/v1/webhooks/secret',
        '/health',
      ].sort(),
    );
    // The validating schema, except that `format` is documented as json only: the documents
    // have paths of their own (POST /api/v1/extract.srt...), each answering one media type.
    const body = OPERATION_SPECS.find((o) => o.operationId === 'extract')!.body!;
    const documented = doc.paths['/api/v1/extract'].post.requestBody.content['application/json'].schema;
    expect(inlined(doc, documented)).toEqual({
      ...body,
      properties: {
        ...(body.properties as object),
        format: {
          ...(body.properties as { format: object }).format,
          enum: ['json'],
          description: expect.any(String),
        },
      },
    });
    expect(Object.keys(doc.paths['/api/v1/extract'].post.responses['200'].content)).toEqual([
      'application/json',
    ]);
    const documents = { srt: 'text/srt', vtt: 'text/vtt', txt: 'text/plain', md: 'text/markdown' };
    for (const [format, type] of Object.entries(documents)) {
      const op = doc.paths[`/api/v1/extract.${format}`].post;
      expect(Object.keys(op.responses['200'].content), format).toEqual([type]);
      expect(op.responses['200'].content[type].schema.type).toBe('string');
      expect(op.requestBody.content['application/json'].schema.properties.format).toBeUndefined();
    }
    const playlistParams = doc.paths['/api/v1/playlist'].get.parameters.map((p: { name: string }) => p.name);
    expect(playlistParams).toEqual(
      expect.arrayContaining(['url', 'max', 'language', 'format', 'include_timestamps', 'include']),
    );
    expect(doc.components.securitySchemes.ApiKey).toEqual({
      type: 'apiKey',
      in: 'header',
      name: 'X-API-Key',
    });
    expect(doc.components.securitySchemes.Bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.paths['/api/v1/extract'].post.security).toEqual([{ ApiKey: [] }, { Bearer: [] }]);
    expect(Object.keys(doc.paths['/api/v1/extract'].post.responses['401'].headers)).toContain(
      'WWW-Authenticate',
    );
    expect(doc.paths['/api/v1/validate'].get.security).toEqual([]);
  });

  it('real responses conform to the documented response schemas', async () => {
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    const doc = (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    gw.backends.handlers.getTranscript = async (req) => transcript(req.videoId);
    const extractRes = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      payload: { url: VIDEO_URL, include: ['tags', 'view_count', 'is_live'] },
      headers: { 'x-api-key': KEYS.free },
    });
    const check = (schema: object, body: unknown) => {
      const validate = ajv.compile(inlined(doc, schema) as object);
      expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
    };
    check(
      doc.paths['/api/v1/extract'].post.responses['200'].content['application/json'].schema,
      extractRes.json(),
    );
    const batchRes = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/batch',
      payload: { urls: [VIDEO_URL, 'bad'], format: 'md' },
      headers: { 'x-api-key': KEYS.free },
    });
    check(
      doc.paths['/api/v1/batch'].post.responses['200'].content['application/json'].schema,
      batchRes.json(),
    );
    const health = await gw.app.inject({ method: 'GET', url: '/health' });
    check(doc.paths['/health'].get.responses['200'].content['application/json'].schema, health.json());
    const err = await gw.app.inject({ method: 'POST', url: '/api/v1/extract', payload: {} });
    check(doc.components.schemas.Error, err.json());
  });

  it('documents the status and the rate-limit headers of real error responses', async () => {
    const doc = (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const blocked = async () => {
      throw appError('UPSTREAM_BLOCKED', 'bot check', 'bot_check');
    };
    gw.backends.handlers.summarize = blocked;
    gw.backends.handlers.getComments = blocked;
    gw.backends.handlers.analyzeComments = blocked;
    gw.backends.handlers.getPlaylist = blocked;
    const cases = [
      ['post', '/api/v1/summarize', { video_url: VIDEO_URL }],
      ['get', `/api/v1/comments?url=${encodeURIComponent(VIDEO_URL)}`, undefined],
      ['post', '/api/v1/comments/analyze', { video_url: VIDEO_URL }],
      ['get', `/api/v1/playlist?url=${encodeURIComponent(PLAYLIST_URL)}&max=1`, undefined],
      ['post', '/api/v1/extract', {}],
    ] as const;
    for (const [method, url, payload] of cases) {
      const res = await gw.app.inject({
        method: method.toUpperCase() as 'GET' | 'POST',
        url,
        ...(payload ? { payload } : {}),
        headers: { 'x-api-key': KEYS.pro },
      });
      expect(res.statusCode, url).toBeGreaterThanOrEqual(400);
      expect(res.headers['x-ratelimit-limit'], url).toBeDefined();
      const documented = doc.paths[url.split('?')[0]!][method].responses[String(res.statusCode)];
      expect(documented, `${url} ${res.statusCode}`).toBeDefined();
      expect(Object.keys(documented.headers)).toEqual(
        expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']),
      );
    }
  });

  it('every operation documents its errors (linked, one example each), headers and request examples', async () => {
    const doc = (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    expect(Object.keys(doc.components.headers)).toEqual(
      expect.arrayContaining([
        'X-RateLimit-Limit',
        'X-RateLimit-Remaining',
        'X-RateLimit-Reset',
        'X-Request-Id',
      ]),
    );
    for (const spec of OPERATION_SPECS) {
      const op = doc.paths[spec.path][spec.method.toLowerCase()];
      const documented = Object.entries(op.responses as Record<string, Record<string, any>>) // eslint-disable-line @typescript-eslint/no-explicit-any
        // The success answers (createJob also answers a dry run's 200) are not errors.
        .filter(([status]) => !status.startsWith('2'))
        .flatMap(([status, response]) => {
          const examples = Object.values(response.content['application/json'].examples) as {
            value: { error: { code: ErrorCode; docs_url: string } };
          }[];
          for (const { value } of examples) {
            expect(ERROR_CATALOG[value.error.code].status, `${spec.operationId} ${value.error.code}`).toBe(
              Number(status),
            );
            expect(value.error.docs_url).toBe(docsUrl(value.error.code));
            expect(response.description).toContain(`[\`${value.error.code}\`](${docsUrl(value.error.code)})`);
            check(ajv, inlined(doc, doc.components.schemas.Error) as object, value);
          }
          return examples.map((e) => e.value.error.code);
        });
      expect(documented.sort(), spec.operationId).toEqual(
        [...documentedErrors(spec), 'INTERNAL_ERROR'].sort(),
      );
      // Counted operations (not the account-only reads): Idempotency-Key and the daily limit's headers.
      if (spec.auth && spec.auth !== 'account') {
        const names = op.parameters.map((p: { name: string }) => p.name);
        expect(names, spec.operationId).toContain('Idempotency-Key');
        expect(Object.keys(op.responses[String(spec.successStatus ?? 200)].headers)).toEqual(
          expect.arrayContaining([
            'X-RateLimit-Limit',
            'X-RateLimit-Remaining',
            'X-RateLimit-Reset',
            'Idempotent-Replayed',
          ]),
        );
      }
      for (const response of Object.values(op.responses as Record<string, { headers: object }>)) {
        for (const ref of Object.values(response.headers) as { $ref: string }[]) {
          expect(
            doc.components.headers[ref.$ref.replace('#/components/headers/', '')],
            ref.$ref,
          ).toBeDefined();
        }
      }
      // Request examples are valid requests: what the reference's samples send would be accepted.
      const bodyExamples = op.requestBody?.content['application/json'].examples ?? {};
      if (spec.body) expect(Object.keys(bodyExamples).length, spec.operationId).toBeGreaterThan(0);
      for (const { value } of Object.values(bodyExamples) as { value: unknown }[])
        check(ajv, spec.body!, value);
      if (spec.querystring) {
        const query = Object.fromEntries(
          op.parameters
            .filter((p: { in: string; example?: unknown }) => p.in === 'query' && p.example !== undefined)
            .map((p: { name: string; example: unknown }) => [p.name, p.example]),
        );
        if ((spec.querystring.required as string[] | undefined)?.includes('url')) {
          expect(query.url, spec.operationId).toBeDefined();
        }
        check(ajv, spec.querystring, query);
      }
    }
  });

  it('/docs is the Scalar reference: its bundle from this origin, the live document, <API_KEY>, a strict CSP', async () => {
    const redirect = await gw.app.inject({ method: 'GET', url: '/docs' });
    expect(redirect.statusCode).toBe(301);
    expect(redirect.headers.location).toBe('/docs/');
    const res = await gw.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toContain('<script src="js/scalar.js"></script>');
    expect(res.body).toContain('"url": "/openapi.json"');
    // JSON in an inline script: < and > are escaped so the string cannot close the script.
    expect(res.body).toContain('"value": "\\u003cAPI_KEY\\u003e"');
    expect(res.body).toContain('"withDefaultFonts": false');
    // Nothing from elsewhere: no absolute URL in a src or href.
    expect(res.body).not.toMatch(/(src|href)="(https?:)?\/\//);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*'unsafe-(inline|eval)'/);
    // The one inline script runs because its hash is allowed, not because inline scripts are.
    const inline = [...res.body.matchAll(/<script(?![^>]*\ssrc=)[^>]*>([\s\S]*?)<\/script>/g)].map(
      (m) => m[1]!,
    );
    expect(inline).toHaveLength(1);
    const hash = createHash('sha256').update(inline[0]!).digest('base64');
    expect(csp).toContain(`'sha256-${hash}'`);

    const bundle = await gw.app.inject({ method: 'GET', url: '/docs/js/scalar.js' });
    expect(bundle.statusCode).toBe(200);
    expect(bundle.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect(bundle.body.length).toBeGreaterThan(1_000_000);
  });

  it('/docs/errors has one anchor per catalogue code, matching every docs_url', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/docs/errors' });
    expect(res.statusCode).toBe(200);
    for (const code of ERROR_CODES) {
      const anchor = docsUrl(code).split('#')[1];
      expect(res.body).toContain(`<section id="${anchor}">`);
    }
    expect(res.body.match(/<section id=/g)).toHaveLength(ERROR_CODES.length);
    expect(res.body).toContain('id="unauthorized"');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('script-src');
    expect(csp).not.toContain('unsafe-inline');
    expect(res.body).not.toContain('<script');
  });
});
