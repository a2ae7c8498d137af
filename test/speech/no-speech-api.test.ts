/**
 * A captionless video whose audio holds no speech, through the public API with the real speech
 * engine: the fake platform serves plucked chords and a tone, then silence (sox, encoded as the
 * platform serves audio: Opus in WebM, AAC in MP4) as the captionless video's audio. With
 * `mode: "auto"` the answer is `404 NO_SPEECH` with nothing charged, and the engine's VAD kept the
 * audio from the model (its `subx_speech_voiced_seconds_total` does not move).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessEventBus } from '@subx/ports';
import { recordRequirement } from '@subx/testing/engines';
import { startFakeYouTube, videoIds, type FakeYouTube } from '@subx/testing/fake-youtube';
import { speechToolsPresent } from '@subx/testing/speech';
import { startInProcessSystem, type InProcessSystem } from '../system/support.ts';
import { MODEL_ID, installEngine, spawnEngine, type StartedEngine } from './speech-engine.ts';

const { python, error } = installEngine();
const ready = python !== '' && speechToolsPresent();

describe.skipIf(!ready && !process.env.CI)('a captionless video without speech, through the API', () => {
  recordRequirement({
    kind: 'tool',
    name: 'speech engine (faster-whisper) and espeak-ng/sox',
    ran: ready || !!process.env.CI,
    reason: python
      ? 'sox or espeak-ng is missing (apt-get install espeak-ng sox)'
      : `services/speech/install.sh failed: ${error}`,
    enable: 'bash scripts/engines.sh up stt && apt-get install espeak-ng sox',
  });
  const dir = mkdtempSync(join(tmpdir(), 'no-speech-'));
  let yt: FakeYouTube;
  let engine: StartedEngine;
  let system: InProcessSystem;

  beforeAll(async () => {
    const wav = join(dir, 'music.wav');
    const sox = spawnSync(
      'sox',
      [
        '-n',
        '-r',
        '16000',
        '-c',
        '1',
        wav,
        'synth',
        '0.5',
        'pluck',
        'C4',
        'pluck',
        'E4',
        'pluck',
        'G4',
        ':',
        'synth',
        '0.5',
        'sine',
        '440',
        'repeat',
        '9',
        'pad',
        '0',
        '5',
        'vol',
        '0.4',
      ],
      { encoding: 'utf8' },
    );
    expect(sox.status, sox.stderr).toBe(0);
    for (const [file, codec] of [
      ['music.webm', ['-c:a', 'libopus', '-b:a', '24k']],
      ['music.m4a', ['-c:a', 'aac', '-b:a', '32k']],
    ] as const) {
      const ff = spawnSync('ffmpeg', ['-v', 'error', '-y', '-i', wav, ...codec, join(dir, file)], {
        encoding: 'utf8',
      });
      expect(ff.status, ff.stderr).toBe(0);
    }
    yt = await startFakeYouTube({
      speechAudio: { webm: join(dir, 'music.webm'), m4a: join(dir, 'music.m4a'), durationMs: 15_000 },
    });
    engine = await spawnEngine();
    system = await startInProcessSystem({
      youtubeUrl: yt.url,
      bus: createInProcessEventBus(),
      credits: 20,
      extractorEnv: { TRANSCRIBE_BASE_URL: engine.url, TRANSCRIBE_MODEL: MODEL_ID },
    });
  }, 180_000);
  afterAll(async () => {
    await system?.stop();
    engine?.child.kill('SIGTERM');
    await yt?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const metric = async (series: string) => {
    const text = await (await fetch(engine.url.replace(/\/v1$/, '/metrics'))).text();
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return Number(line?.slice(series.length + 1));
  };
  const voiced = () => metric('subx_speech_voiced_seconds_total');
  const noSpeech = () => metric('subx_speech_transcriptions_total{outcome="no_speech"}');

  it('answers 404 NO_SPEECH, charges nothing, and the model never heard it', async () => {
    const before = (await system.gateway.access.accounts.get(system.accountId))!.credits;
    const voicedBefore = await voiced();
    const noSpeechBefore = await noSpeech();
    const res = await system.gateway.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      headers: { 'x-api-key': system.apiKey, 'content-type': 'application/json' },
      payload: { url: `https://www.youtube.com/watch?v=${videoIds.speechNoCaptions}`, mode: 'auto' },
    });
    expect(res.statusCode, res.body).toBe(404);
    expect(res.json()).toMatchObject({ error: { code: 'NO_SPEECH' } });
    expect((await system.gateway.access.accounts.get(system.accountId))!.credits).toBe(before);
    // The audio was fetched and sent: the engine decoded it, and its VAD gave the model nothing.
    expect(yt.requests.some((r) => r.path.includes('videoplayback'))).toBe(true);
    expect(await noSpeech()).toBeGreaterThan(noSpeechBefore);
    expect(await voiced()).toBe(voicedBefore);
  }, 120_000);
});
