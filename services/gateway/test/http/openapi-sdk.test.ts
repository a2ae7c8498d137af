/**
 * The OpenAPI document as SDK generators read it : named component schemas behind every
 * `$ref`, the error code as the catalogue's enum, one media type per success response, every status
 * the gateway really answers declared, and examples that run as written.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ERROR_CATALOG, ERROR_CODES } from '@subx/errors';
import type { ErrorCode } from '@subx/errors';
import { videoIds } from '@subx/testing/fake-youtube';
import { OPERATION_SPECS } from '../../src/openapi/operations.ts';
import type { OperationSpec } from '../../src/domain/operation-spec.ts';
import { KEYS, VIDEO_URL, buildTestGateway } from './support.ts';
import type { TestGateway } from './support.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let gw: TestGateway;
let doc: Json;
beforeEach(async () => {
  gw = await buildTestGateway();
  doc = (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json();
});
afterEach(async () => {
  await gw.app.close();
});

/** Every value under `node` with its JSON path. */
function* walk(node: unknown, path: string[] = []): Generator<[string[], Json]> {
  if (node === null || typeof node !== 'object') return;
  yield [path, node as Json];
  for (const [key, value] of Object.entries(node)) yield* walk(value, [...path, key]);
}

const operation = (spec: OperationSpec): Json => doc.paths[spec.path][spec.method.toLowerCase()];
/** A request of `spec` with its path parameters filled. */
const urlOf = (spec: OperationSpec) =>
  spec.path.replace('{job_id}', 'job_aaaaaaaaa0123456789abcdef').replace('{index}', '0');

describe('OpenAPI for SDK generators', () => {
  it('every $ref resolves, and no object schema is left inline in an operation', () => {
    for (const [path, node] of walk(doc)) {
      if (typeof node.$ref !== 'string') continue;
      const target = node.$ref
        .replace(/^#\//, '')
        .split('/')
        .reduce<Json | undefined>((at, key) => at?.[key], doc);
      expect(target, `${path.join('.')}: ${node.$ref}`).toBeDefined();
    }
    // Inline objects become generated names such as ExtractResponse200: every one is named, but
    // request bodies, which stay in their operation (components.ts says why).
    for (const [path, node] of walk(doc.paths)) {
      if (node.type === 'object' || (Array.isArray(node.type) && node.type.includes('object'))) {
        expect(path.join('.')).toMatch(/\.examples\.|\.requestBody\.content\.application\/json\.schema$/);
      }
    }
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining([
        'ExtractResult',
        'BatchItemSuccess',
        'BatchItemFailure',
        'PlaylistResult',
        'Comment',
        'Health',
        'RateLimit',
        'Error',
        'ErrorCode',
        'SummarizeResult',
        'CommentAnalysis',
        'Job',
      ]),
    );
  });

  it('batch items are a union of success and failure on `success`', () => {
    const { schemas } = doc.components;
    expect(schemas.BatchItem.oneOf).toEqual([
      { $ref: '#/components/schemas/BatchItemSuccess' },
      { $ref: '#/components/schemas/BatchItemFailure' },
    ]);
    expect(schemas.BatchItemSuccess.properties.success.const).toBe(true);
    expect(schemas.BatchItemFailure.properties.success.const).toBe(false);
    expect(schemas.BatchResult.properties.results.items).toEqual({ $ref: '#/components/schemas/BatchItem' });
    expect(schemas.JobResultItem.oneOf).toHaveLength(2);
  });

  it('the error code is the catalogue as an enum, and every documented code is in it', () => {
    const { schemas } = doc.components;
    expect(schemas.ErrorDetail.properties.code).toEqual({ $ref: '#/components/schemas/ErrorCode' });
    expect(schemas.ErrorCode.enum).toEqual(ERROR_CODES);
    for (const field of ['valid_fields', 'required_tier', 'required', 'available', 'available_languages'])
      expect(schemas.ErrorDetail.properties[field], field).toBeDefined();
    for (const [path, node] of walk(doc.paths)) {
      if (path.at(-2) !== 'examples' || !node.value?.error) continue;
      expect(ERROR_CODES, path.join('.')).toContain(node.value.error.code);
    }
  });

  it('every success response has one media type, the one its path answers', async () => {
    for (const spec of OPERATION_SPECS) {
      const ok = operation(spec).responses[String(spec.successStatus ?? 200)];
      // One job result is a download in the job's format: the job, not the request, picks it.
      if (spec.documentFormats) continue;
      expect(Object.keys(ok.content), spec.operationId).toHaveLength(1);
    }
    for (const [format, type] of [
      ['srt', 'text/srt'],
      ['md', 'text/markdown'],
    ]) {
      const res = await gw.app.inject({
        method: 'POST',
        url: `/api/v1/extract.${format}`,
        payload: { url: VIDEO_URL },
        headers: { 'x-api-key': KEYS.free },
      });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toContain(type);
      expect(Object.keys(doc.paths[`/api/v1/extract.${format}`].post.responses['200'].content)).toEqual([
        type,
      ]);
    }
    // `format` in the body still answers the document for existing callers.
    const legacy = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      payload: { url: VIDEO_URL, format: 'vtt' },
      headers: { 'x-api-key': KEYS.free },
    });
    expect(legacy.headers['content-type']).toContain('text/vtt');
    // The path names the format; a format in that body is an unknown field.
    const both = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/extract.srt',
      payload: { url: VIDEO_URL, format: 'vtt' },
      headers: { 'x-api-key': KEYS.free },
    });
    expect(both.statusCode).toBe(400);
  });

  it('declares every status the gateway answers: 401, 413, 415 and 409 where they occur', async () => {
    const declared = (spec: OperationSpec, status: number, code: ErrorCode) => {
      const response = operation(spec).responses[String(status)];
      expect(response, `${spec.operationId} ${status}`).toBeDefined();
      expect(Object.keys(response.content['application/json'].examples), spec.operationId).toContain(code);
    };
    for (const spec of OPERATION_SPECS) {
      if (spec.auth) declared(spec, 401, 'UNAUTHORIZED');
      if (spec.auth && spec.auth !== 'account') declared(spec, 409, 'CONFLICT');
      if (spec.body) declared(spec, 413, 'PAYLOAD_TOO_LARGE');
      if (spec.body) declared(spec, 415, 'UNSUPPORTED_MEDIA_TYPE');
    }
    // What the routes answer; the jobs routes exist only with the jobs module (jobs.test.ts).
    for (const spec of OPERATION_SPECS.filter((o) => o.tag !== 'Bulk jobs' && o.tag !== 'Watches')) {
      const method = spec.method;
      if (spec.auth) {
        const res = await gw.app.inject({ method, url: urlOf(spec), ...(spec.body ? { payload: {} } : {}) });
        expect(res.statusCode, spec.operationId).toBe(401);
      }
      if (!spec.body) continue;
      const headers = { 'x-api-key': KEYS.enterprise };
      const text = await gw.app.inject({
        method,
        url: urlOf(spec),
        payload: 'url=x',
        headers: { ...headers, 'content-type': 'text/plain' },
      });
      expect(text.statusCode, spec.operationId).toBe(415);
      const huge = await gw.app.inject({
        method,
        url: urlOf(spec),
        payload: JSON.stringify({ url: 'x'.repeat(2 * 1024 * 1024) }),
        headers: { ...headers, 'content-type': 'application/json' },
      });
      expect(huge.statusCode, spec.operationId).toBe(413);
    }
    // 409: the same Idempotency-Key while the first request still runs.
    let release: () => void = () => undefined;
    const original = gw.backends.handlers.getTranscript;
    gw.backends.handlers.getTranscript = async (req, options) => {
      await new Promise<void>((resolve) => (release = resolve));
      return original(req, options);
    };
    const request = {
      method: 'POST' as const,
      url: '/api/v1/extract.txt',
      payload: { url: VIDEO_URL },
      headers: { 'x-api-key': KEYS.free, 'idempotency-key': 'sdk-test-in-flight' },
    };
    const first = gw.app.inject(request);
    await expect.poll(() => gw.backends.calls.length).toBeGreaterThan(0);
    const second = await gw.app.inject(request);
    expect(second.statusCode).toBe(409);
    expect(second.json().error.code).toBe('CONFLICT');
    release();
    expect((await first).statusCode).toBe(200);
  });

  it('examples run as written: no fixed Idempotency-Key, videos the demo replay knows', () => {
    const known = new Set<string>(Object.values(videoIds));
    for (const [path, node] of walk(doc.paths)) {
      if (node.name === 'Idempotency-Key') {
        expect(node.example, path.join('.')).toBeUndefined();
        expect(node.examples, path.join('.')).toBeUndefined();
      }
    }
    const urls = JSON.stringify(doc.paths).match(/https:\/\/(?:www\.youtube\.com|youtu\.be)[^"\\]*/g) ?? [];
    expect(urls.length).toBeGreaterThan(5);
    for (const url of urls) {
      const id = /(?:v=|youtu\.be\/)([\w-]{11})/.exec(url)?.[1];
      const list = /list=([\w-]+)/.exec(url)?.[1];
      if (id) expect(known, url).toContain(id);
      else if (list) expect(list, url).toBe('PLsubxDemoPlaylist01');
      else expect(url, 'a channel example').toContain('/@');
    }
    expect(ERROR_CATALOG.CONFLICT.status).toBe(409);
  });
});
