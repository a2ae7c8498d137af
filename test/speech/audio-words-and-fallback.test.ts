/**
 * Through the public API, the fake platform, the real YouTube client, the extractor over gRPC and
 * the real speech engine (speech-engine.ts):
 * - captions refused, audio allowed: a video whose English caption track needs a PO token in every
 *   client's answer (and no PO token provider is configured) is, with `mode: "auto"`, transcribed
 *   from its audio, charged as a transcription, and says `source: "audio"`, `fallback_reason:
 *   "captions_refused"`, `upstream_reason: "po_token"`; without `mode` it stays 503
 *   UPSTREAM_BLOCKED po_token, nothing charged;
 * - word timestamps of transcribed audio: `include: ["words"]` gives the transcribed segments
 *   their words from the engine's word timestamps (ordered, inside the audio), on extract and on
 *   batch; the same transcript without words comes from the cache, with no second charge.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessEventBus } from '@subx/ports';
import { recordRequirement } from '@subx/testing/engines';
import { startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import type { FakeYouTube, SpeechAudio } from '@subx/testing/fake-youtube';
import { startInProcessSystem, type InProcessSystem } from '../system/support.ts';
import { ready, startEngine } from './speech-engine.ts';

const REFUSED = `https://www.youtube.com/watch?v=${videoIds.speechCaptionsRefused}`;
/** A CPU engine on a busy machine may take minutes: every bound is wide. */
const TIMEOUT_MS = 600_000;
const CLIP_SECONDS = 20;

/**
 * The first CLIP_SECONDS of the speech recording, cut without re-encoding (ffmpeg), so the engine
 * hears a fraction of it; the whole recording where ffmpeg does not run.
 */
function speechClip(dir: string): SpeechAudio | undefined {
  const source = (file: string) =>
    fileURLToPath(new URL(`../../packages/testing/audio/${file}`, import.meta.url));
  const clip: SpeechAudio = {
    webm: join(dir, 'clip.webm'),
    m4a: join(dir, 'clip.m4a'),
    durationMs: CLIP_SECONDS * 1000,
  };
  for (const [file, out] of [
    ['speech.webm', clip.webm],
    ['speech.m4a', clip.m4a],
  ] as const) {
    const cut = spawnSync(
      'ffmpeg',
      ['-v', 'error', '-y', '-i', source(file), '-t', String(CLIP_SECONDS), '-c', 'copy', out],
      {
        timeout: 60_000,
      },
    );
    if (cut.status !== 0) return undefined;
  }
  return clip;
}

interface Answer {
  subtitle_type: string;
  source: string;
  fallback_reason?: string;
  upstream_reason?: string;
  subtitles: {
    text: string;
    start: number;
    duration: number;
    words?: { text: string; start: number; end: number }[];
  }[];
  cached: boolean;
}

describe.skipIf(!ready && !process.env.CI)(
  'audio when captions are refused, and word times, a real speech engine',
  () => {
    recordRequirement({
      kind: 'tool',
      name: 'speech engine',
      ran: ready || !!process.env.CI,
      reason: 'scripts/stt-server/install.sh failed and TRANSCRIBE_BASE_URL is unset',
      enable: 'bash scripts/stt-server/install.sh',
    });
    let yt: FakeYouTube;
    let engine: { url: string; child?: ChildProcess };
    let system: InProcessSystem;
    let clipDir = '';
    /** Seconds of audio the engine hears (1 credit per started minute). */
    let seconds = 70;

    beforeAll(async () => {
      expect(ready, 'the speech engine can run').toBe(true);
      clipDir = mkdtempSync(join(tmpdir(), 'speech-clip-'));
      const clip = speechClip(clipDir);
      if (clip) seconds = CLIP_SECONDS;
      yt = await startFakeYouTube(clip ? { speechAudio: clip } : {});
      engine = await startEngine();
      // The engine's own model name (GET /v1/models), whichever engine serves.
      const models = (await (await fetch(`${engine.url}/models`)).json()) as { data: { id: string }[] };
      system = await startInProcessSystem({
        youtubeUrl: yt.url,
        bus: createInProcessEventBus(),
        credits: 20,
        extractorEnv: {
          TRANSCRIBE_BASE_URL: engine.url,
          TRANSCRIBE_MODEL: models.data[0]!.id,
          TRANSCRIBE_TIMEOUT_MS: String(TIMEOUT_MS),
        },
        // A transcription's call waits TRANSCRIBE_SYNC_DEADLINE_MS, which must leave the extractor one
        // whole model request (TRANSCRIBE_TIMEOUT_MS) or nothing is started.
        gatewayConfig: {
          GRPC_DEADLINE_MS: String(TIMEOUT_MS),
          TRANSCRIBE_SYNC_DEADLINE_MS: String(TIMEOUT_MS + 60_000),
        },
        // The hold on the credits outlives the slowest transcription.
        gatewayEnv: { CREDIT_RESERVATION_TTL_MS: String(2 * TIMEOUT_MS) },
      });
    }, 120_000);
    afterAll(async () => {
      await system?.stop();
      engine?.child?.kill('SIGTERM');
      await yt?.close();
      if (clipDir) rmSync(clipDir, { recursive: true, force: true });
    });

    const post = (path: string, payload: Record<string, unknown>) =>
      system.gateway.app.inject({
        method: 'POST',
        url: path,
        headers: { 'x-api-key': system.apiKey, 'content-type': 'application/json' },
        payload,
      });
    const balance = async () => (await system.gateway.access.accounts.get(system.accountId))!.credits;

    it('without mode, refused captions stay 503 UPSTREAM_BLOCKED po_token and nothing is charged', async () => {
      const before = await balance();
      const res = await post('/api/v1/extract', { url: REFUSED });
      expect(res.statusCode, res.body).toBe(503);
      expect(res.json()).toMatchObject({ error: { code: 'UPSTREAM_BLOCKED', reason: 'po_token' } });
      expect(await balance()).toBe(before);
      expect(yt.requests.filter((r) => r.path.includes('videoplayback'))).toHaveLength(0);
    });

    it(
      'mode auto with words: refused captions → the audio, saying why, each segment with the engine word times; charged once',
      async () => {
        const before = await balance();
        const res = await post('/api/v1/extract', { url: REFUSED, mode: 'auto', include: ['words'] });
        expect(res.statusCode, res.body).toBe(200);
        const answer = res.json<Answer>();
        expect(answer).toMatchObject({
          subtitle_type: 'transcribed',
          source: 'audio',
          fallback_reason: 'captions_refused',
          upstream_reason: 'po_token',
          cached: false,
        });
        // Whisper gives few, long segments (20 s of counting: one or two); words time each of them.
        expect(answer.subtitles.length).toBeGreaterThan(0);
        expect(answer.subtitles.flatMap((s) => s.words ?? []).length).toBeGreaterThan(10);
        let last = 0;
        for (const s of answer.subtitles) {
          expect(s.words?.length, JSON.stringify(s)).toBeGreaterThan(0);
          for (const w of s.words!) {
            expect(w.text.trim()).toBe(w.text);
            expect(w.start).toBeGreaterThanOrEqual(last - 1e-6);
            expect(w.end).toBeGreaterThanOrEqual(w.start);
            expect(w.end).toBeLessThanOrEqual(seconds + 1);
            last = w.start;
          }
          // a segment's words are its own: they start inside it
          expect(s.words![0]!.start).toBeGreaterThanOrEqual(s.start - 0.5);
          expect(s.words!.at(-1)!.start).toBeLessThanOrEqual(s.start + s.duration + 0.5);
        }
        // 1 credit per started minute of audio, as for a captionless video
        expect(await balance()).toBe(before - Math.ceil(seconds / 60));
        expect(yt.requests.filter((r) => r.path.includes('videoplayback')).length).toBeGreaterThan(0);
      },
      TIMEOUT_MS,
    );

    it('the same transcript without words and on batch: from the cache, no second transcription charge, the reason each time', async () => {
      const before = await balance();
      const plain = await post('/api/v1/extract', { url: REFUSED, mode: 'auto' });
      expect(plain.statusCode, plain.body).toBe(200);
      const answer = plain.json<Answer>();
      expect(answer).toMatchObject({ source: 'audio', fallback_reason: 'captions_refused', cached: true });
      expect(answer.subtitles.some((s) => 'words' in s)).toBe(false);

      const batch = await post('/api/v1/batch', { urls: [REFUSED], mode: 'auto', include: ['words'] });
      expect(batch.statusCode, batch.body).toBe(200);
      const [item] = batch.json<{ results: (Answer & { success: boolean })[] }>().results;
      expect(item).toMatchObject({
        success: true,
        source: 'audio',
        fallback_reason: 'captions_refused',
        upstream_reason: 'po_token',
      });
      expect(item!.subtitles.every((s) => (s.words?.length ?? 0) > 0)).toBe(true);
      // a batch item's own credit; its transcription came from the cache
      expect(await balance()).toBe(before - 1);
    });
  },
);
