/**
 * A platform that gives no answer at all, on loopback: a closed port, a server that resets every
 * connection, and TLS spoken to a plain-HTTP server. The client's error says why in an operator's
 * words (not "fetch failed"), and the observer counts each attempt by cause.
 */
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { YouTubeClient, loadYouTubeConfig } from '../src/index.ts';
import { networkCauseOf } from '../src/network-cause.ts';
import { NOW, errorOf } from './support.ts';

const servers: Server[] = [];
async function listen(onConnection: (socket: Socket) => void): Promise<number> {
  const server = createServer(onConnection);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

let closedPort = 0;
let resettingPort = 0;
let plainPort = 0;
beforeAll(async () => {
  closedPort = await listen(() => {});
  await new Promise<void>((resolve) => servers.pop()!.close(() => resolve()));
  resettingPort = await listen((socket) => socket.resetAndDestroy());
  plainPort = await listen((socket) => {
    socket.once('data', () => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nno'));
  });
});

const failureOf = async (url: string) => {
  try {
    await fetch(url);
  } catch (err) {
    return err;
  }
  throw new Error('expected fetch to fail');
};

describe('networkCauseOf', () => {
  it('reads the cause chain of what fetch throws', async () => {
    expect(networkCauseOf(await failureOf(`http://127.0.0.1:${closedPort}/`))).toMatchObject({
      cause: 'refused',
      code: 'ECONNREFUSED',
    });
    expect(networkCauseOf(await failureOf(`http://127.0.0.1:${resettingPort}/`)).cause).toBe('reset');
    expect(networkCauseOf(await failureOf(`https://127.0.0.1:${plainPort}/`)).cause).toBe('tls');
    const dns = Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error('getaddrinfo ENOTFOUND www.youtube.com'), { code: 'ENOTFOUND' }),
    });
    expect(networkCauseOf(dns)).toEqual({
      cause: 'dns',
      code: 'ENOTFOUND',
      detail: 'DNS lookup failed (ENOTFOUND)',
    });
    expect(networkCauseOf(new TypeError('fetch failed')).cause).toBe('other');
  });
});

describe('the client when the platform cannot be reached', () => {
  it('says why in its error, and counts every attempt by cause', async () => {
    const causes: string[] = [];
    const client = YouTubeClient.create(
      loadYouTubeConfig({
        YOUTUBE_BASE_URL: `http://127.0.0.1:${closedPort}`,
        YOUTUBE_RETRY_BASE_MS: '1',
        YOUTUBE_RETRIES: '2',
        YOUTUBE_VERSION_REFRESH_MS: '0',
      }),
      {
        clock: { now: () => NOW },
        observer: { call: () => {}, network: ({ cause }) => void causes.push(cause) },
      },
    );
    const error = await errorOf(client.getTranscript({ videoId: 'dQw4w9WgXcQ', language: 'en' }));
    expect(error).toMatchObject({ code: 'UPSTREAM_ERROR', retryable: true });
    expect(error.message).toContain(
      'could not be reached: connection refused or no route to the host (ECONNREFUSED)',
    );
    expect(error.message).not.toContain('fetch failed');
    expect(causes.length).toBeGreaterThanOrEqual(3);
    expect(new Set(causes)).toEqual(new Set(['refused']));
    expect(client.upstreamStats.networkFailures.get('refused')).toBe(causes.length);
    expect(client.upstreamStats.unreachable(60_000)).toBe(true);
    await client.close();
  });
});
