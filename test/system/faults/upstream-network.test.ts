/**
 * Every upstream through every way a network fails, through the public API: the platform
 * (captions), its audio host, the translation model, the speech-to-text model and the embeddings
 * endpoint, each pointed at a loopback address that fails one way — a name that does not resolve,
 * a refused connection, a connection reset, a TLS handshake that fails, no answer in time. Each
 * answer is a documented retryable error, never a 500, and nothing is charged.
 *
 * This worker runs under the no-network gate (@subx/testing/no-network): `upstream.invalid` fails
 * its lookup here, without asking any resolver.
 */
import '@subx/testing/no-network';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessEventBus } from '@subx/ports';
import { SPEECH_VIDEO_ID, startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import { startInProcessSystem } from '../support.ts';

type Kind = 'dns' | 'refused' | 'reset' | 'tls' | 'timeout';
const KINDS: Kind[] = ['dns', 'refused', 'reset', 'tls', 'timeout'];
const TIMEOUT_MS = '400';

/** Loopback servers that fail: reset at once, hold without a byte, or answer TLS with plain text. */
const sockets = new Set<Socket>();
const servers: Server[] = [];
async function listen(onSocket: (socket: Socket) => void): Promise<number> {
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    onSocket(socket);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

const origins = {} as Record<Kind, string>;
let platform: FakeYouTube;
let refusedPort = 0;

beforeAll(async () => {
  const reset = await listen((socket) => socket.resetAndDestroy());
  const hold = await listen(() => undefined);
  const plain = await listen((socket) => socket.end('HTTP/1.1 400 Bad Request\r\n\r\n'));
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  refusedPort = (closed.address() as { port: number }).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  origins.dns = 'http://upstream.invalid:8080';
  origins.refused = `http://127.0.0.1:${refusedPort}`;
  origins.reset = `http://127.0.0.1:${reset}`;
  origins.tls = `https://127.0.0.1:${plain}`;
  origins.timeout = `http://127.0.0.1:${hold}`;
  platform = await startFakeYouTube({ tlangRefused: true });
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  await platform?.close();
});

type SystemOptions = Omit<Parameters<typeof startInProcessSystem>[0], 'bus'>;

interface Upstream {
  /** The system with this upstream at `origin`. */
  system(origin: string): SystemOptions;
  payload: Record<string, unknown>;
}

const video = `https://www.youtube.com/watch?v=${videoIds.manualAndAuto}`;
const speech = `https://www.youtube.com/watch?v=${SPEECH_VIDEO_ID}`;
const UPSTREAMS: Record<string, Upstream> = {
  'the platform (captions)': {
    system: (origin) => ({ youtubeUrl: origin, youtubeEnv: { YOUTUBE_TIMEOUT_MS: TIMEOUT_MS } }),
    payload: { url: video },
  },
  'the translation model': {
    system: () => ({ youtubeUrl: platform.url }),
    payload: { url: video, language: 'fr', translate: true },
  },
  'the speech-to-text model': {
    system: () => ({ youtubeUrl: platform.url }),
    payload: { url: speech, mode: 'transcribe' },
  },
  'the embeddings endpoint': {
    system: (origin) => ({
      youtubeUrl: platform.url,
      gatewayEnv: {
        EMBEDDINGS_BASE_URL: `${origin}/v1`,
        EMBEDDINGS_API_KEY: 'k',
        EMBEDDINGS_MODEL: 'm',
        EMBEDDINGS_TIMEOUT_MS: TIMEOUT_MS,
      },
    }),
    payload: { url: video, embed: true },
  },
};
// The model endpoints' own settings, set here where `origin` is known.
const modelEnv: Record<string, (origin: string) => Record<string, string>> = {
  'the translation model': (origin) => ({
    OPENAI_BASE_URL: `${origin}/v1`,
    OPENAI_API_KEY: 'k',
    TRANSLATION_TIMEOUT_MS: TIMEOUT_MS,
  }),
  'the speech-to-text model': (origin) => ({
    TRANSCRIBE_BASE_URL: `${origin}/v1`,
    TRANSCRIBE_API_KEY: 'k',
    TRANSCRIBE_TIMEOUT_MS: TIMEOUT_MS,
  }),
};

const RETRYABLE = ['UPSTREAM_ERROR', 'UPSTREAM_TIMEOUT', 'SERVICE_UNAVAILABLE', 'TRANSCRIPTION_FAILED'];

async function answerWith(
  options: Parameters<typeof startInProcessSystem>[0],
  payload: Record<string, unknown>,
) {
  const system = await startInProcessSystem({ ...options, credits: 100 });
  try {
    const res = await system.gateway.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      headers: { 'x-api-key': system.apiKey, 'content-type': 'application/json' },
      payload,
    });
    const balance = (await system.gateway.access.accounts.get(system.accountId))?.credits;
    return { status: res.statusCode, body: res.body, balance };
  } finally {
    await system.stop();
  }
}

describe.each(Object.entries(UPSTREAMS))('%s failing', (name, upstream) => {
  const bus = createInProcessEventBus();
  afterAll(() => bus.close());

  it.each(KINDS)(
    'by %s answers a documented retryable error, never a 500, and charges nothing',
    async (kind) => {
      const origin = origins[kind];
      const base = upstream.system(origin);
      const extra = modelEnv[name]?.(origin) ?? {};
      const { status, body, balance } = await answerWith(
        { ...base, bus, extractorEnv: { ...base.extractorEnv, ...extra } },
        upstream.payload,
      );
      expect(status, body).not.toBe(500);
      const error = (JSON.parse(body) as { error?: { code: string; retryable: boolean } }).error;
      expect(RETRYABLE, body).toContain(error?.code);
      expect(error?.retryable, body).toBe(true);
      expect(balance).toBe(100);
    },
    60_000,
  );
});

describe("the platform's audio host failing", () => {
  const bus = createInProcessEventBus();
  afterAll(() => bus.close());

  // A piece of audio is bounded by 30 s: the timeout is the one kind left out here.
  it.each(KINDS.filter((k) => k !== 'timeout'))(
    'by %s answers a documented retryable error, never a 500, and charges nothing',
    async (kind) => {
      const withAudioAt = await startFakeYouTube({ mediaOrigin: origins[kind] });
      try {
        const { status, body, balance } = await answerWith(
          {
            youtubeUrl: withAudioAt.url,
            bus,
            extractorEnv: {
              TRANSCRIBE_BASE_URL: `http://127.0.0.1:${refusedPort}/v1`,
              TRANSCRIBE_API_KEY: 'k',
            },
          },
          { url: speech, mode: 'transcribe' },
        );
        expect(status, body).not.toBe(500);
        const error = (JSON.parse(body) as { error?: { code: string; retryable: boolean } }).error;
        expect(['UPSTREAM_ERROR', 'UPSTREAM_TIMEOUT'], body).toContain(error?.code);
        expect(error?.retryable, body).toBe(true);
        expect(balance).toBe(100);
      } finally {
        await withAudioAt.close();
      }
    },
    60_000,
  );
});
