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
      playerClients: ['WEB', 'ANDROID', 'VISIONOS'],
      webClient: 'WEB',
    });
    expect(c.clients.ANDROID?.version).toBe('21.26.364');
  });

  it('reads every variable and merges client overrides field by field', () => {
    const c = loadYouTubeConfig({
      YOUTUBE_BASE_URL: 'http://127.0.0.1:9999/',
      YOUTUBE_TIMEOUT_MS: '2500',
      YOUTUBE_RETRIES: '0',
      YOUTUBE_PROXIES: 'http://user:pw@10.0.0.1:8080, https://10.0.0.2:8443',
      YOUTUBE_CLIENTS: JSON.stringify({
        order: ['ANDROID', 'WEB'],
        clients: { ANDROID: { version: '21.02.35' } },
      }),
    });
    expect(c).toMatchObject({
      baseUrl: 'http://127.0.0.1:9999',
      timeoutMs: 2500,
      retries: 0,
      playerClients: ['ANDROID', 'WEB'],
    });
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
    ]) {
      expect(err?.message).toContain(name);
    }
    expect(err?.message).not.toContain('secret');
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
