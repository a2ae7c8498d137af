/**
 * The free reads (a job, the job list, results, MCP's handshake and tool list) cost no credit and
 * count against no daily limit; each key gets ACCOUNT_READ_LIMIT_PER_MINUTE of them, then 429 with
 * Retry-After until the minute turns, and another key is not affected.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { KEYS, buildTestGateway } from './support.ts';
import type { TestGateway } from './support.ts';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.app.close();
  gw = undefined;
});

const auth = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};

describe('the free reads’ limit per key', () => {
  it('answers 429 with Retry-After past the limit on MCP’s handshake and tool list, per key', async () => {
    gw = await buildTestGateway({ readLimit: 3 });
    const post = (key: string, body: unknown) =>
      gw!.app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { ...auth(key), accept: 'application/json, text/event-stream' },
        payload: JSON.stringify(body),
      });
    expect((await post(KEYS.pro, initialize)).statusCode).toBe(200);
    expect((await post(KEYS.pro, { jsonrpc: '2.0', id: 2, method: 'tools/list' })).statusCode).toBe(200);
    expect((await post(KEYS.pro, initialize)).statusCode).toBe(200);
    const limited = await post(KEYS.pro, { jsonrpc: '2.0', id: 3, method: 'tools/list' });
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.json()).toMatchObject({ error: { code: 'RATE_LIMITED' } });
    expect((await post(KEYS.pro2, initialize)).statusCode).toBe(200);
    gw.clock.advance(60_000);
    expect((await post(KEYS.pro, initialize)).statusCode).toBe(200);
  });

  it('counts the webhook-secret read against the same limit', async () => {
    gw = await buildTestGateway({ readLimit: 2 });
    const read = () =>
      gw!.app.inject({ method: 'GET', url: '/api/v1/webhooks/secret', headers: auth(KEYS.pro) });
    const first = await read();
    const second = await read();
    expect(first.statusCode).not.toBe(429);
    expect(second.statusCode).toBe(first.statusCode);
    expect((await read()).statusCode).toBe(429);
  });

  it('never counts a request without a valid key', async () => {
    gw = await buildTestGateway({ readLimit: 1 });
    for (let i = 0; i < 3; i++) {
      const res = await gw.app.inject({
        method: 'GET',
        url: '/api/v1/webhooks/secret',
        headers: auth('nope'),
      });
      expect(res.statusCode).toBe(401);
    }
    expect(
      (await gw.app.inject({ method: 'GET', url: '/api/v1/webhooks/secret', headers: auth(KEYS.pro) }))
        .statusCode,
    ).not.toBe(429);
  });
});
