/**
 * Speech-to-text through the public API: the fake platform's captionless video (synthSpeech: 70 s
 * of espeak-ng speech as audio-only formats served in ranges), the real YouTube client, the
 * extractor over gRPC and the gateway, and the real speech engine (services/speech: faster-whisper, Whisper tiny.en).
 * Without `mode` the video is still 404 NO_SUBTITLES; with `mode: "auto"` the engine's segments come
 * back with their timings, `source: "audio"` and `subtitle_type: "transcribed"`, 2 credits for 70 s;
 * srt of the same video comes from the cache at no charge; a free key is 403; a model that fails
 * is a retryable 5xx that charges nothing; no endpoint configured is 422; audio larger than the
 * endpoint takes in one request is cut into parts whose timings join into one transcript.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessEventBus } from '@subx/ports';
import { recordRequirement } from '@subx/testing/engines';
import { startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import { wordErrorRate } from '@subx/testing/speech';
import { startInProcessSystem, type InProcessSystem } from '../system/support.ts';
import { MODEL_ID, installEngine, ready, startEngine } from './speech-engine.ts';

const URL_ = `https://www.youtube.com/watch?v=${videoIds.speechNoCaptions}`;
/** What the captionless video says (espeak-ng read it; packages/testing/audio). */
const SPOKEN = readFileSync(new URL('../../packages/testing/audio/speech.txt', import.meta.url), 'utf8');

interface Answer {
  subtitle_type: string;
  source: string;
  language: string;
  subtitles: { text: string; start: number; duration: number }[];
  cached: boolean;
}

describe.skipIf(!ready && !process.env.CI)('transcription through the API, a real speech engine', () => {
  recordRequirement({
    kind: 'tool',
    name: 'speech engine (faster-whisper)',
    ran: ready || !!process.env.CI,
    reason: `services/speech/install.sh failed and TRANSCRIBE_BASE_URL is unset: ${installEngine().error}`,
    enable: 'bash scripts/engines.sh up stt',
  });
  let yt: FakeYouTube;
  let engine: { url: string; child?: ChildProcess };
  let system: InProcessSystem;
  let bare: InProcessSystem;

  beforeAll(async () => {
    expect(ready, 'the speech engine can run').toBe(true);
    yt = await startFakeYouTube();
    engine = await startEngine();
    system = await startInProcessSystem({
      youtubeUrl: yt.url,
      bus: createInProcessEventBus(),
      credits: 20,
      extractorEnv: { TRANSCRIBE_BASE_URL: engine.url, TRANSCRIBE_MODEL: MODEL_ID },
    });
    bare = await startInProcessSystem({ youtubeUrl: yt.url, bus: createInProcessEventBus(), credits: 20 });
  }, 120_000);
  afterAll(async () => {
    await system?.stop();
    await bare?.stop();
    engine?.child?.kill('SIGTERM');
    await yt?.close();
  });

  const post = (s: InProcessSystem, payload: Record<string, unknown>, key = s.apiKey) =>
    s.gateway.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      payload,
    });
  const balance = async (s: InProcessSystem) => (await s.gateway.access.accounts.get(s.accountId))!.credits;

  it('without mode, a captionless video is still 404 NO_SUBTITLES', async () => {
    const res = await post(system, { url: URL_ });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: { code: 'NO_SUBTITLES' } });
  });

  it('mode auto transcribes the audio once: segments in order within 70 s, 2 credits; srt from the cache', async () => {
    const before = await balance(system);
    const res = await post(system, { url: URL_, mode: 'auto' });
    expect(res.statusCode, res.body).toBe(200);
    const answer = res.json<Answer>();
    expect(answer).toMatchObject({
      subtitle_type: 'transcribed',
      source: 'audio',
      language: 'en',
      cached: false,
    });
    expect(answer.subtitles.length).toBeGreaterThan(3);
    let last = -1;
    for (const s of answer.subtitles) {
      expect(s.start).toBeGreaterThanOrEqual(last);
      expect(s.start + s.duration).toBeLessThanOrEqual(71);
      last = s.start;
    }
    // A real recogniser on espeak-ng's reading of speech.txt: readable text, at most 15% of the words wrong.
    const heard = answer.subtitles.map((s) => s.text).join(' ');
    expect(wordErrorRate(SPOKEN, heard), heard).toBeLessThanOrEqual(0.15);
    expect(await balance(system)).toBe(before - 2);

    const srt = await system.gateway.app.inject({
      method: 'POST',
      url: '/api/v1/extract.srt',
      headers: { 'x-api-key': system.apiKey, 'content-type': 'application/json' },
      payload: { url: URL_, mode: 'auto' },
    });
    expect(srt.statusCode).toBe(200);
    expect(srt.body).toMatch(/^1\r?\n00:00:\d\d,\d{3} --> /);
    expect(await balance(system)).toBe(before - 2);
    const plainAudioRequests = yt.requests.filter((r) => r.path.includes('videoplayback'));
    expect(plainAudioRequests.length).toBeGreaterThan(0);
  }, 120_000);

  it('needs the Pro tier: a free key is 403 TIER_REQUIRED', async () => {
    const free = await system.gateway.access.accounts.createAccount({ tier: 'free', credits: 10 });
    const res = await post(system, { url: URL_, mode: 'transcribe' }, free.apiKey);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error: { code: 'TIER_REQUIRED' } });
  });

  it('without a transcription endpoint: 422 TRANSCRIPTION_NOT_CONFIGURED, nothing charged', async () => {
    const before = await balance(bare);
    const res = await post(bare, { url: URL_, mode: 'auto' });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ error: { code: 'TRANSCRIPTION_NOT_CONFIGURED', retryable: false } });
    expect(await balance(bare)).toBe(before);
  });

  it('a model that fails is 502 TRANSCRIPTION_FAILED, retryable, and charges nothing', async () => {
    const broken = await startInProcessSystem({
      youtubeUrl: yt.url,
      bus: createInProcessEventBus(),
      credits: 20,
      extractorEnv: { TRANSCRIBE_BASE_URL: 'http://127.0.0.1:1/v1', TRANSCRIBE_TIMEOUT_MS: '2000' },
    });
    try {
      const before = await balance(broken);
      const res = await post(broken, { url: URL_, mode: 'transcribe' });
      expect(res.statusCode).toBe(502);
      expect(res.json()).toMatchObject({ error: { code: 'TRANSCRIPTION_FAILED', retryable: true } });
      expect(await balance(broken)).toBe(before);
    } finally {
      await broken.stop();
    }
  });

  it('audio over the upload limit is cut into parts: one transcript timed across the whole audio', async () => {
    const spool = mkdtempSync(join(tmpdir(), 'transcription-spool-'));
    // The recording served is 219 KB of Opus: a 100 KB limit cuts it into three parts.
    const split = await startInProcessSystem({
      youtubeUrl: yt.url,
      bus: createInProcessEventBus(),
      credits: 20,
      extractorEnv: {
        TRANSCRIBE_BASE_URL: engine.url,
        TRANSCRIBE_MODEL: MODEL_ID,
        TRANSCRIBE_UPLOAD_MAX_BYTES: '100000',
        TRANSCRIBE_SPOOL_DIR: spool,
      },
    });
    try {
      const before = await balance(split);
      const res = await post(split, { url: URL_, mode: 'transcribe' });
      expect(res.statusCode, res.body).toBe(200);
      const answer = res.json<Answer>();
      expect(answer).toMatchObject({ subtitle_type: 'transcribed', source: 'audio', language: 'en' });
      let last = -1;
      for (const s of answer.subtitles) {
        expect(s.start).toBeGreaterThanOrEqual(last);
        expect(s.start + s.duration).toBeLessThanOrEqual(71);
        last = s.start;
      }
      // Speech from the later parts, timed from the start of the whole audio, not of its part.
      expect(answer.subtitles.some((s) => s.start > 45)).toBe(true);
      // Parts cut mid-word may lose a word at each cut: still readable.
      const heard = answer.subtitles.map((s) => s.text).join(' ');
      expect(wordErrorRate(SPOKEN, heard), heard).toBeLessThanOrEqual(0.2);
      // Charged for the audio once, however many parts it took.
      expect(await balance(split)).toBe(before - 2);
      // The spooled audio and its parts are gone once the answer is made.
      expect(readdirSync(spool)).toEqual([]);
    } finally {
      await split.stop();
      rmSync(spool, { recursive: true, force: true });
    }
  }, 120_000);

  it('a tier’s cap: past it extract and batch items are 422 AUDIO_TOO_LONG, nothing fetched or charged', async () => {
    // Pro may transcribe 60 s here: the 70 s video is over it.
    const capped = await startInProcessSystem({
      youtubeUrl: yt.url,
      bus: createInProcessEventBus(),
      credits: 20,
      gatewayEnv: { ACCESS_PRICING_JSON: JSON.stringify({ transcribeMaxSeconds: { pro: 60 } }) },
      extractorEnv: { TRANSCRIBE_BASE_URL: engine.url, TRANSCRIBE_MODEL: MODEL_ID },
    });
    try {
      const before = await balance(capped);
      const audioFetches = () => yt.requests.filter((r) => r.path.includes('videoplayback')).length;
      const fetchedBefore = audioFetches();
      const res = await post(capped, { url: URL_, mode: 'transcribe', force_refresh: true });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json()).toMatchObject({ error: { code: 'AUDIO_TOO_LONG', max_seconds: 60 } });
      expect(res.json<{ error: { message: string } }>().error.message).toMatch(
        /pro tier transcribes at most 60 s/,
      );

      const batch = await capped.gateway.app.inject({
        method: 'POST',
        url: '/api/v1/batch',
        headers: { 'x-api-key': capped.apiKey, 'content-type': 'application/json' },
        payload: { urls: [URL_], mode: 'transcribe' },
      });
      expect(batch.statusCode, batch.body).toBe(200);
      expect(batch.json()).toMatchObject({ results: [{ success: false, error_code: 'AUDIO_TOO_LONG' }] });
      expect(audioFetches()).toBe(fetchedBefore);
      expect(await balance(capped)).toBe(before);

      const account = await capped.gateway.app.inject({
        method: 'GET',
        url: '/api/v1/account',
        headers: { 'x-api-key': capped.apiKey },
      });
      expect(account.json()).toMatchObject({ transcription: { max_seconds: 60, sync_max_seconds: 60 } });
    } finally {
      await capped.stop();
    }
  });
});
