import { describe, expect, it } from 'vitest';
import { loadYouTubeConfig } from './config.ts';
import { rebase } from './transport.ts';

describe('loadYouTubeConfig', () => {
  it('defaults', () => {
    const c = loadYouTubeConfig({});
    expect(c).toMatchObject({
      baseUrl: 'https://www.youtube.com',
      timeoutMs: 10000,
      retries: 2,
      proxies: [],
      captionClients: ['VISIONOS', 'ANDROID', 'IOS'],
      webClient: 'WEB',
      poTokenProviderUrl: undefined,
      sessions: { size: 4, rotateEvery: 50, bootstrap: 'visitor_id' },
      blockedRetries: 2,
    });
    expect(c.clients.ANDROID?.version).toBe('21.26.364');
    expect(c.maxBodyBytes.timedtext).toBe(16 * 1024 * 1024);
  });

  it('never puts a gated WEB-family client on the caption ladder without a PO-token provider', () => {
    expect(() =>
      loadYouTubeConfig({ YOUTUBE_CLIENTS: JSON.stringify({ order: ['WEB', 'ANDROID'] }) }),
    ).toThrow(/WEB.*PO token.*YOUTUBE_PO_TOKEN_PROVIDER_URL/);
    const withProvider = loadYouTubeConfig({ YOUTUBE_PO_TOKEN_PROVIDER_URL: 'http://127.0.0.1:4416/' });
    expect(withProvider.captionClients).toEqual(['VISIONOS', 'ANDROID', 'IOS', 'WEB']);
    expect(withProvider.poTokenProviderUrl).toBe('http://127.0.0.1:4416');
  });

  it('reads every variable and merges client overrides field by field', () => {
    const c = loadYouTubeConfig({
      YOUTUBE_BASE_URL: 'http://127.0.0.1:9999/',
      YOUTUBE_TIMEOUT_MS: '2500',
      YOUTUBE_RETRIES: '0',
      YOUTUBE_PROXIES: 'http://user:pw@10.0.0.1:8080, https://10.0.0.2:8443',
      YOUTUBE_BLOCKED_RETRIES: '5',
      YOUTUBE_SESSIONS: '8',
      YOUTUBE_SESSION_ROTATE_EVERY: '20',
      YOUTUBE_SESSION_BOOTSTRAP: 'sw_js_data',
      YOUTUBE_BREAKER_MIN_BLOCKS: '3',
      YOUTUBE_BREAKER_RATIO: '0.25',
      YOUTUBE_BREAKER_WINDOW_MS: '10000',
      YOUTUBE_BREAKER_COOLDOWN_MS: '5000',
      YOUTUBE_VERSION_REFRESH_MS: '0',
      YOUTUBE_MAX_BODY_BYTES: '65536',
      YOUTUBE_CLIENTS: JSON.stringify({
        order: ['ANDROID', 'IOS'],
        clients: { ANDROID: { version: '21.02.35' } },
      }),
    });
    expect(c).toMatchObject({
      baseUrl: 'http://127.0.0.1:9999',
      timeoutMs: 2500,
      retries: 0,
      blockedRetries: 5,
      captionClients: ['ANDROID', 'IOS'],
      sessions: { size: 8, rotateEvery: 20, bootstrap: 'sw_js_data' },
      breaker: { minBlocks: 3, ratio: 0.25, windowMs: 10000, cooldownMs: 5000 },
      versionRefreshMs: 0,
    });
    expect(Object.values(c.maxBodyBytes)).toEqual(Array(8).fill(65536));
    expect(c.proxies).toHaveLength(2);
    expect(c.clients.ANDROID).toMatchObject({ version: '21.02.35', id: 3, name: 'ANDROID' });
  });

  it('reports every problem at once, never echoing proxy credentials', () => {
    let err: { code?: string; message: string } | undefined;
    try {
      loadYouTubeConfig({
        YOUTUBE_BASE_URL: 'ftp://x',
        YOUTUBE_TIMEOUT_MS: 'soon',
        YOUTUBE_RETRIES: '99',
        YOUTUBE_PROXIES: 'socks5://user:secret@host:1',
        YOUTUBE_CLIENTS: '{"order":["NOPE"]}',
        YOUTUBE_SESSIONS: '0x10',
        YOUTUBE_BREAKER_RATIO: '2',
        YOUTUBE_SESSION_BOOTSTRAP: 'cookies',
        YOUTUBE_PO_TOKEN_PROVIDER_URL: 'nope',
      });
    } catch (e) {
      err = e as { code?: string; message: string };
    }
    expect(err?.code).toBe('INVALID_REQUEST');
    for (const name of [
      'YOUTUBE_BASE_URL',
      'YOUTUBE_TIMEOUT_MS',
      'YOUTUBE_RETRIES',
      'YOUTUBE_PROXIES',
      "unknown client 'NOPE'",
      'YOUTUBE_SESSIONS',
      'YOUTUBE_BREAKER_RATIO',
      'YOUTUBE_SESSION_BOOTSTRAP',
      'YOUTUBE_PO_TOKEN_PROVIDER_URL',
    ]) {
      expect(err?.message).toContain(name);
    }
    expect(err?.message).not.toContain('secret');
  });
});

describe('loadYouTubeConfig with the shared env helpers', () => {
  it('takes durations with units and names the range of a number out of it', () => {
    expect(
      loadYouTubeConfig({ YOUTUBE_TIMEOUT_MS: '5s', YOUTUBE_LADDER_PROBE_INTERVAL_MS: '2m' }),
    ).toMatchObject({
      timeoutMs: 5_000,
      ladder: { probeIntervalMs: 120_000 },
    });
    let err: { details?: { errors?: string[] } } | undefined;
    try {
      loadYouTubeConfig({ YOUTUBE_RETRIES: '11', YOUTUBE_PROXIES: 'http://ok:1, ftp://user:pw@x' });
    } catch (e) {
      err = e as typeof err;
    }
    expect(err?.details?.errors).toEqual([
      'YOUTUBE_PROXIES.1 must be an http(s) URL',
      'YOUTUBE_RETRIES must be an integer between 0 and 10',
    ]);
  });
});

describe('rebase', () => {
  it('moves absolute platform URLs onto the base URL and keeps path and query', () => {
    expect(rebase('http://127.0.0.1:1234', 'https://www.youtube.com/api/timedtext?v=a&lang=en')).toBe(
      'http://127.0.0.1:1234/api/timedtext?v=a&lang=en',
    );
    expect(rebase('http://127.0.0.1:1234', 'https://youtubei.googleapis.com/youtubei/v1/player?x=1')).toBe(
      'http://127.0.0.1:1234/youtubei/v1/player?x=1',
    );
    expect(rebase('http://127.0.0.1:1234', '/youtubei/v1/next')).toBe(
      'http://127.0.0.1:1234/youtubei/v1/next',
    );
  });
  it('refuses other hosts', () => {
    expect(() => rebase('https://www.youtube.com', 'https://evil.example/x')).toThrow(/non-platform/);
  });
});
