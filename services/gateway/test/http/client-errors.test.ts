/**
 * Requests a normal client cannot send, written byte by byte over node:net: whatever Node's HTTP
 * parser or fastify's router rejects must still answer the documented error body
 * `{error:{code,message,docs_url,request_id,retryable}}` with `X-Request-Id`, never fastify's or
 * Node's own body.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestGateway } from './support.ts';
import type { TestGateway } from './support.ts';

let gw: TestGateway;
let port = 0;
beforeAll(async () => {
  gw = await buildTestGateway();
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  port = (gw.app.server.address() as { port: number }).port;
});
afterAll(async () => {
  await gw.app.close();
});

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends `data` as is and reads until the server closes (bounded: 10 s). */
function send(data: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => socket.end(data));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within 10 s: ${Buffer.concat(chunks).toString()}`));
    }, 10_000);
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', () => {}); // a reset after the answer is fine; the answer is what is checked
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const [statusLine = '', ...lines] = text.slice(0, split).split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: text.slice(split + 4) });
    });
  });
}

function expectDocumented(
  res: RawResponse,
  status: number,
  code: string,
  extra: Record<string, unknown> = {},
) {
  expect(res.status, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const requestId = res.headers['x-request-id'];
  expect(requestId).toMatch(/^req_/);
  const body = JSON.parse(res.body) as Record<string, unknown>;
  expect(body).toEqual({
    error: {
      code,
      message: expect.any(String),
      docs_url: `/docs/errors#${code.toLowerCase().replaceAll('_', '-')}`,
      request_id: requestId,
      retryable: expect.any(Boolean),
      ...extra,
    },
  });
  expect(res.body).not.toMatch(/statusCode|FST_|Client Error|HPE_/);
  if (res.headers['content-length'])
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
}

describe('errors before and around the router', () => {
  it('a URL past Node’s header limit is 414 URI_TOO_LONG', async () => {
    const res = await send(`GET /health?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: t\r\n\r\n`);
    expectDocumented(res, 414, 'URI_TOO_LONG');
  });

  it('a URL between 8 KB and the parser limit is 414 URI_TOO_LONG too', async () => {
    const res = await send(
      `GET /api/v1/validate?url=${'a'.repeat(9_000)} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`,
    );
    expectDocumented(res, 414, 'URI_TOO_LONG');
  });

  it('headers past the limit are 431 HEADERS_TOO_LARGE', async () => {
    const res = await send(`GET /health HTTP/1.1\r\nHost: t\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expectDocumented(res, 431, 'HEADERS_TOO_LARGE');
  });

  it.each([
    ['not a number', 'Content-Length: abc\r\n'],
    ['negative', 'Content-Length: -1\r\n'],
    ['two different lengths', 'Content-Length: 1\r\nContent-Length: 2\r\n'],
  ])('a bad Content-Length (%s) is 400 INVALID_REQUEST', async (_name, header) => {
    const res = await send(
      `POST /api/v1/extract HTTP/1.1\r\nHost: t\r\n${header}Content-Type: application/json\r\n\r\n{}`,
    );
    expectDocumented(res, 400, 'INVALID_REQUEST');
    expect(JSON.parse(res.body).error.message).toMatch(/Content-Length/);
  });

  it('a NUL in a header value is 400 INVALID_REQUEST', async () => {
    const res = await send(`GET /health HTTP/1.1\r\nHost: t\r\nX-Note: a\u0000b\r\n\r\n`);
    expectDocumented(res, 400, 'INVALID_REQUEST');
    expect(JSON.parse(res.body).error.message).toMatch(/header/);
  });

  it('a method that is not an HTTP method is 501 METHOD_NOT_IMPLEMENTED', async () => {
    const res = await send(`FOO /health HTTP/1.1\r\nHost: t\r\n\r\n`);
    expectDocumented(res, 501, 'METHOD_NOT_IMPLEMENTED');
  });

  it('a method Node knows but no route has is 405 METHOD_NOT_ALLOWED with Allow', async () => {
    const res = await send(`PROPFIND /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`);
    // The path's one method (HEAD goes with GET) is the suggestion.
    expectDocumented(res, 405, 'METHOD_NOT_ALLOWED', { suggestion: { method: 'GET', path: '/health' } });
    expect(res.headers.allow).toBe('GET, HEAD');
  });

  it('a path that is not valid percent-encoding is 400 INVALID_REQUEST', async () => {
    const res = await send(`GET /api/v1/%zz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`);
    expectDocumented(res, 400, 'INVALID_REQUEST');
  });

  it('bytes that are not HTTP are 400 INVALID_REQUEST', async () => {
    const res = await send('hello\r\n\r\n');
    expectDocumented(res, 400, 'INVALID_REQUEST');
  });

  it('the server keeps serving afterwards', async () => {
    const res = await send('GET /health/live HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n');
    expect(res.status).toBe(200);
  });
});
