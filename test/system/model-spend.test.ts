/**
 * Black-box, on the real `npm start` against the fake platform and stand-in models slower than the
 * gateway's deadline (GRPC_DEADLINE_MS): model work is settled when it is done, not when a caller
 * receives it. A transcription or a model translation whose caller gave up is paid once by that
 * caller, and the retry comes from the cache at no charge, with the model asked once; three
 * requests for a video without speech make one model call and are not charged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAi, type FakeOpenAi } from '@subx/testing/fake-openai';
import { startFakeSpeech, type FakeSpeech } from '@subx/testing/fake-speech';
import { startFakeYouTube, videoIds, type FakeYouTube } from '@subx/testing/fake-youtube';
import { startNpmStart, type NpmStartProcess } from './npm-start-process.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/** The gateway's deadline for calls that start no model work; the models answer well after it. */
const GATEWAY_DEADLINE_MS = 1_000;
const MODEL_DELAY_MS = 2_500;
/** How long a model's "no speech" is remembered here: the silent case runs first, then it is forgotten. */
const FAILURE_TTL_MS = 2_000;
const SPEECH_URL = `https://www.youtube.com/watch?v=${videoIds.speechNoCaptions}`;
const CAPTIONS_URL = `https://www.youtube.com/watch?v=${videoIds.manualAndAuto}`;

let youtube: FakeYouTube;
let speech: FakeSpeech;
let translator: FakeOpenAi;
let system: NpmStartProcess;

async function call(path: string, body?: unknown, signal?: AbortSignal) {
  const response = await fetch(`${system.base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      'x-api-key': system.apiKey,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    ...(signal ? { signal } : {}),
  });
  return { status: response.status, body: (await response.json()) as Json };
}

const balance = async () => (await call('/api/v1/account')).body.credits_balance as number;

/** A caller that gives up before the model answers. */
async function giveUp(body: unknown): Promise<void> {
  await expect(call('/api/v1/extract', body, AbortSignal.timeout(GATEWAY_DEADLINE_MS / 2))).rejects.toThrow();
}

beforeAll(async () => {
  youtube = await startFakeYouTube({ tlangRefused: true });
  speech = await startFakeSpeech({ heard: 'silence' });
  translator = await startFakeOpenAi({
    respond: (request) => {
      const user = request.body?.messages?.find((m) => m.role === 'user')?.content ?? '{}';
      const { segments = [] } = JSON.parse(user) as { segments?: string[] };
      return { json: { segments: segments.map((text) => `FR: ${text}`) }, delayMs: MODEL_DELAY_MS };
    },
  });
  system = await startNpmStart({
    YOUTUBE_BASE_URL: youtube.url,
    GRPC_DEADLINE_MS: String(GATEWAY_DEADLINE_MS),
    TRANSCRIBE_BASE_URL: speech.baseUrl,
    TRANSCRIBE_MODEL: 'stand-in',
    TRANSCRIBE_TIMEOUT_MS: '20000',
    TRANSCRIBE_FAILURE_TTL_MS: String(FAILURE_TTL_MS),
    OPENAI_BASE_URL: translator.baseUrl,
    OPENAI_API_KEY: 'sk-test-not-a-real-key',
  });
}, 90_000);

afterAll(async () => {
  await system?.stop();
  await speech?.close();
  await translator?.close();
  await youtube?.close();
});

describe('model work on npm start, the models slower than the gateway’s deadline', () => {
  it('three requests for a video without speech make one model call and charge nothing', async () => {
    const before = await balance();
    for (let i = 0; i < 3; i++) {
      const res = await call('/api/v1/extract', { url: SPEECH_URL, mode: 'transcribe' });
      expect(res.status, JSON.stringify(res.body)).toBe(404);
      expect(res.body).toMatchObject({ error: { code: 'NO_SPEECH' } });
    }
    expect(speech.uploads()).toBe(1);
    expect(await balance()).toBe(before);
  });

  it('a transcription the caller gave up on is paid once, and the retry comes free from the cache', async () => {
    // the silent verdict above is forgotten; the model now hears speech, slower than the deadline
    await new Promise((resolve) => setTimeout(resolve, FAILURE_TTL_MS + 200));
    speech.set({ heard: 'speech', seconds: 70, delayMs: MODEL_DELAY_MS });
    const uploads = speech.uploads();
    const before = await balance();
    await giveUp({ url: SPEECH_URL, mode: 'transcribe' });
    // settled when the model is done: 2 credits for 70 s, to the caller who started it
    await expect.poll(balance, { timeout: 15_000, interval: 250 }).toBe(before - 2);
    const retry = await call('/api/v1/extract', { url: SPEECH_URL, mode: 'transcribe' });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body).toMatchObject({ source: 'audio', cached: true });
    expect(await balance()).toBe(before - 2);
    expect(speech.uploads()).toBe(uploads + 1);
  }, 30_000);

  it('a model translation the caller gave up on is paid once, and the retry comes free from the cache', async () => {
    const before = await balance();
    await giveUp({ url: CAPTIONS_URL, language: 'fr', translate: true });
    await expect.poll(balance, { timeout: 15_000, interval: 250 }).toBe(before - 2);
    const asked = translator.requests.length;
    const retry = await call('/api/v1/extract', { url: CAPTIONS_URL, language: 'fr', translate: true });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body).toMatchObject({ translated_by: 'model', cached: true });
    expect(await balance()).toBe(before - 2);
    expect(translator.requests.length).toBe(asked);
  }, 30_000);
});
