import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakePoTokenProvider, type FakePoTokenProvider } from '@subx/testing/fake-po-token';

let provider: FakePoTokenProvider;

async function getPot(body: unknown): Promise<{ status: number; json: Record<string, unknown>; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${provider.url}/get_pot`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return {
    status: res.status,
    json: (await res.json()) as Record<string, unknown>,
    ms: performance.now() - started,
  };
}

beforeAll(async () => {
  provider = await startFakePoTokenProvider();
});
afterAll(async () => {
  await provider.close();
});
beforeEach(() => {
  provider.reset();
  provider.setLatency(0);
});

describe('fake bgutil PO-token provider', () => {
  it('mints {poToken, contentBinding, expiresAt} for a content binding and caches it', async () => {
    const before = Date.now();
    const first = await getPot({ content_binding: 'F1xioXWb8CY', proxy: 'http://proxy.invalid:3128' });
    expect(first.status).toBe(200);
    expect(first.json).toEqual({
      poToken: expect.stringMatching(/^[A-Za-z0-9_-]{100,}$/),
      contentBinding: 'F1xioXWb8CY',
      expiresAt: expect.any(String),
    });
    const expires = Date.parse(first.json.expiresAt as string);
    expect(expires).toBeGreaterThanOrEqual(before + 6 * 3600_000 - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 6 * 3600_000 + 1000);

    expect((await getPot({ content_binding: 'F1xioXWb8CY' })).json).toEqual(first.json);
    const fresh = await getPot({ content_binding: 'F1xioXWb8CY', bypass_cache: true });
    expect(fresh.json.poToken).not.toBe(first.json.poToken);
    const other = await getPot({ content_binding: 'GJLlxj_dtq8' });
    expect(other.json.poToken).not.toBe(fresh.json.poToken);
    expect(provider.issued.map((t) => t.contentBinding)).toEqual([
      'F1xioXWb8CY',
      'F1xioXWb8CY',
      'GJLlxj_dtq8',
    ]);
    expect(provider.requests[0]?.body).toEqual({
      content_binding: 'F1xioXWb8CY',
      proxy: 'http://proxy.invalid:3128',
    });
  });

  it('binds to a visitorData of its own without a content binding', async () => {
    const { json } = await getPot({});
    expect(json.contentBinding).toEqual(expect.any(String));
    expect(json.contentBinding).not.toBe('');
  });

  it('refuses the deprecated fields and bad JSON with 400 {error}', async () => {
    for (const field of ['data_sync_id', 'visitor_data', 'disable_innertube']) {
      const res = await getPot({ [field]: 'x' });
      expect(res.status).toBe(400);
      expect(res.json.error).toMatch(/deprecated/);
    }
    expect((await getPot('{not json')).status).toBe(400);
    expect(provider.issued).toHaveLength(0);
  });

  it('answers /ping with uptime and version, /invalidate_caches with 204', async () => {
    const ping = (await (await fetch(`${provider.url}/ping`)).json()) as Record<string, unknown>;
    expect(ping).toEqual({ server_uptime: expect.any(Number), version: expect.any(String) });
    const first = await getPot({ content_binding: 'v1' });
    expect((await fetch(`${provider.url}/invalidate_caches`, { method: 'POST' })).status).toBe(204);
    expect((await getPot({ content_binding: 'v1' })).json.poToken).not.toBe(first.json.poToken);
    expect((await fetch(`${provider.url}/nope`)).status).toBe(404);
    expect(provider.count('/get_pot')).toBe(2);
  });

  it('fails on demand (status, delay) and applies latency', async () => {
    provider.failNext({ kind: 'status', status: 500 }, { path: '/get_pot' });
    await fetch(`${provider.url}/ping`); // not consumed by another path
    const failed = await getPot({ content_binding: 'x' });
    expect(failed.status).toBe(500);
    expect(failed.json.error).toEqual(expect.any(String));
    expect((await getPot({ content_binding: 'x' })).status).toBe(200);

    provider.failNext({ kind: 'delay', ms: 300 });
    const slow = await getPot({ content_binding: 'y' });
    expect(slow.status).toBe(200);
    expect(slow.ms).toBeGreaterThanOrEqual(280);
    provider.setLatency(250);
    expect((await getPot({ content_binding: 'z' })).ms).toBeGreaterThanOrEqual(230);
  });
});
