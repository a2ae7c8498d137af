/**
 * What the gateway writes to its log, read back as raw JSON lines: one access line per request
 * (request id, route, status, duration, account id), never an API key (a key pasted into a URL is
 * redacted), errors with message, code, stack and cause, and no key twice in one line.
 */
import { AppError } from '@subx/errors';
import { createLogger } from '@subx/service-kit';
import { duplicateKeys } from '@subx/testing/log-lines';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS, VIDEO_URL, buildTestGateway } from './support.ts';
import type { TestGateway } from './support.ts';

const raw: string[] = [];
let gw: TestGateway;
beforeAll(async () => {
  const logger = createLogger({
    service: 'gateway',
    level: 'info',
    destination: { write: (line: string) => void raw.push(line) },
  });
  gw = await buildTestGateway({ deps: { logger } });
});
afterAll(async () => {
  await gw.app.close();
});

type Line = Record<string, unknown> & { err?: Record<string, unknown> };
const lines = () => raw.map((l) => JSON.parse(l) as Line);
const accessLines = (requestId: string) =>
  lines().filter((l) => l.msg === 'request' && l.request_id === requestId);

describe('gateway log lines', () => {
  it('one access line per request with request id, route, status, duration and account id', async () => {
    const res = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      payload: { url: VIDEO_URL },
      headers: { 'x-api-key': KEYS.pro },
    });
    expect(res.statusCode).toBe(200);
    const requestId = res.headers['x-request-id'] as string;
    const mine = lines().filter((l) => l.request_id === requestId);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      level: 'info',
      msg: 'request',
      service: 'gateway',
      request_id: requestId,
      method: 'POST',
      route: '/api/v1/extract',
      url: '/api/v1/extract',
      status: 200,
      duration_ms: expect.any(Number),
      account_id: 'acc_pro',
    });
    expect(lines().some((l) => l.msg === 'incoming request' || l.msg === 'request completed')).toBe(false);
  });

  it('a key in the URL is redacted, a key in the header never appears', async () => {
    const pasted = 'sxk_v1_AbCdEfGhIjKlMnOpQrStUvWxYz012345';
    const res = await gw.app.inject({
      method: 'GET',
      url: `/api/v1/validate?url=${pasted}&again=sxk%5Fv1%5F${pasted.slice(7)}`,
    });
    const res404 = await gw.app.inject({
      method: 'GET',
      url: `/nope/${pasted}`,
      headers: { 'x-api-key': KEYS.pro },
    });
    const [access] = accessLines(res.headers['x-request-id'] as string);
    expect(access).toMatchObject({
      route: '/api/v1/validate',
      status: 400,
      url: '/api/v1/validate?url=sxk_v1_[redacted]&again=sxk_v1_[redacted]',
      account_id: null,
    });
    expect(accessLines(res404.headers['x-request-id'] as string)[0]).toMatchObject({
      route: null,
      status: 404,
      url: '/nope/sxk_v1_[redacted]',
    });
    const all = raw.join('\n');
    expect(all).not.toContain(pasted.slice(7));
    expect(all).not.toContain(KEYS.pro);
  });

  it('a failure is logged with message, code, stack and cause, next to its access line', async () => {
    const cause = Object.assign(new Error('14 UNAVAILABLE: connect ECONNREFUSED'), {
      code: 14,
      metadata: {},
    });
    (cause.metadata as Record<string, unknown>).self = cause.metadata;
    gw.backends.handlers.getTranscript = async () => {
      throw new AppError('UPSTREAM_ERROR', 'The platform answered something we cannot parse.', { cause });
    };
    const res = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      // Past the micro-cache: an earlier test's answer for this video is still in it.
      payload: { url: VIDEO_URL, force_refresh: true },
      headers: { 'x-api-key': KEYS.pro },
    });
    expect(res.statusCode).toBe(502);
    const requestId = res.headers['x-request-id'] as string;
    const failure = lines().find((l) => l.request_id === requestId && l.msg === 'request failed');
    expect(failure?.err).toMatchObject({
      type: 'AppError',
      code: 'UPSTREAM_ERROR',
      message: 'The platform answered something we cannot parse.',
      stack: expect.stringContaining('AppError'),
      cause: { message: '14 UNAVAILABLE: connect ECONNREFUSED', code: 14, stack: expect.any(String) },
    });
    expect(accessLines(requestId)).toHaveLength(1);
    expect(accessLines(requestId)[0]).toMatchObject({ level: 'error', status: 502, account_id: 'acc_pro' });
    expect(raw.join('\n')).not.toContain('unable to serialize');
  });

  it('no line carries a key twice', () => {
    expect(raw.length).toBeGreaterThan(3);
    for (const line of raw) expect(duplicateKeys(line), line).toEqual([]);
  });
});

describe('gateway log lines at LOG_LEVEL=warn (npm start)', () => {
  it('writes no access line for a 2xx, and still the error-level line of a 5xx', async () => {
    const warnRaw: string[] = [];
    const logger = createLogger({
      service: 'gateway',
      level: 'warn',
      destination: { write: (line: string) => void warnRaw.push(line) },
    });
    const quiet = await buildTestGateway({ deps: { logger } });
    try {
      const extract = (payload: Record<string, unknown>) =>
        quiet.app.inject({
          method: 'POST',
          url: '/api/v1/extract',
          payload,
          headers: { 'x-api-key': KEYS.pro },
        });
      expect((await extract({ url: VIDEO_URL })).statusCode).toBe(200);
      quiet.backends.handlers.getTranscript = async () => {
        throw new AppError('UPSTREAM_ERROR', 'The platform answered something we cannot parse.');
      };
      const failed = await extract({ url: VIDEO_URL, force_refresh: true });
      expect(failed.statusCode).toBe(502);
      const access = warnRaw.map((l) => JSON.parse(l) as Line).filter((l) => l.msg === 'request');
      expect(access).toEqual([
        expect.objectContaining({ level: 'error', status: 502, request_id: failed.headers['x-request-id'] }),
      ]);
    } finally {
      await quiet.app.close();
    }
  });
});
