import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TTL_MS, PoTokenProvider } from './provider.ts';

/** A bgutil-shaped provider on loopback: each call mints a new token; `expiresIn` sets its expiry. */
let server: Server;
let url = '';
let minted = 0;
let expiresIn: number | undefined = 600_000;
let failing = false;
const T0 = Date.UTC(2026, 10, 25);

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (failing) return res.writeHead(500).end('{}');
      minted++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          poToken: `pot-${minted}`,
          ...(expiresIn !== undefined ? { expiresAt: new Date(T0 + expiresIn).toISOString() } : {}),
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function provider() {
  let now = T0;
  const p = new PoTokenProvider({ url, timeoutMs: 2_000, clock: { now: () => now } });
  return { p, advance: (ms: number) => (now += ms) };
}

describe('PoTokenProvider', () => {
  it("reuses a video's token until the provider's expiry (less a minute), then fetches a new one", async () => {
    minted = 0;
    expiresIn = 600_000;
    const { p, advance } = provider();
    expect(await p.get('v1')).toBe('pot-1');
    advance(539_999);
    expect(await p.get('v1')).toBe('pot-1');
    advance(1);
    expect(await p.get('v1')).toBe('pot-2');
    expect(p.health()).toMatchObject({ calls: 2, failures: 0, oldestTokenAgeMs: 0 });
  });

  it('without an expiry, keeps a token for the default lifetime, not forever', async () => {
    minted = 0;
    expiresIn = undefined;
    const { p, advance } = provider();
    expect(await p.get('v1')).toBe('pot-1');
    advance(DEFAULT_TTL_MS - 60_000 - 1);
    expect(await p.get('v1')).toBe('pot-1');
    expect(p.health().oldestTokenAgeMs).toBe(DEFAULT_TTL_MS - 60_001);
    advance(1);
    expect(await p.get('v1')).toBe('pot-2');
  });

  it('counts failures and does not cache them', async () => {
    failing = true;
    const { p } = provider();
    await expect(p.get('v1')).rejects.toMatchObject({ code: 'UPSTREAM_ERROR' });
    failing = false;
    expiresIn = 600_000;
    expect(await p.get('v1')).toMatch(/^pot-/);
    const h = p.health();
    expect(h).toMatchObject({ calls: 2, failures: 1 });
    expect(h.lastLatencyMs).toBeGreaterThan(0);
  });
});

describe('PoTokenProvider observer', () => {
  it('reports every call with its outcome and the age of every token handed out', async () => {
    const calls: Array<{ outcome: string; durationMs: number }> = [];
    const ages: number[] = [];
    let now = T0;
    const p = new PoTokenProvider({
      url,
      timeoutMs: 2_000,
      clock: { now: () => now },
      observer: { call: (c) => void calls.push(c), served: (age) => void ages.push(age) },
    });
    failing = false;
    expiresIn = 600_000;
    await p.get('v1');
    now += 30_000;
    await p.get('v1');
    failing = true;
    await expect(p.get('v2')).rejects.toMatchObject({ code: 'UPSTREAM_ERROR' });
    failing = false;
    expect(calls.map((c) => c.outcome)).toEqual(['ok', 'error']);
    expect(calls.every((c) => c.durationMs >= 0)).toBe(true);
    expect(ages).toEqual([0, 30_000]);
  });

  it('a throwing observer never fails the token', async () => {
    failing = false;
    const p = new PoTokenProvider({
      url,
      timeoutMs: 2_000,
      observer: {
        call: () => {
          throw new Error('metrics broke');
        },
        served: () => {
          throw new Error('metrics broke');
        },
      },
    });
    expect(await p.get('v3')).toMatch(/^pot-/);
    expect(await p.get('v3')).toMatch(/^pot-/);
  });
});
