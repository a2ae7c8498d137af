import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scrape } from '@subx/service-kit';
import { deferred } from '@subx/testing/wait';
import type { AudioPart } from './audio-file.ts';
import { AudioTranscriber } from './audio-transcriber.ts';
import type { Transcription } from './client.ts';
import { registerTranscriptionQueue } from './metrics.ts';

const spool = mkdtempSync(join(tmpdir(), 'audio-transcriber-'));
afterAll(() => rmSync(spool, { recursive: true, force: true }));

async function* pieces(...texts: string[]): AsyncGenerator<Uint8Array> {
  for (const text of texts) yield new TextEncoder().encode(text);
}

const audio = (videoId: string, ...texts: string[]) => ({
  videoId,
  format: {
    itag: 251,
    url: 'https://audio.example/x',
    mimeType: 'audio/webm; codecs="opus"',
    bitrate: 50_000,
  },
  pieces: pieces(...texts),
  metadata: { duration: 70 } as never,
});

const heard: Transcription = {
  language: 'en',
  durationSeconds: 70,
  segments: [{ start: 0, duration: 1, text: 'hi' }],
};

describe('AudioTranscriber', () => {
  it('hands the model the spooled file under the video’s name and the container’s type, then removes it', async () => {
    const seen: { parts: AudioPart[]; fileName: string; mimeType: string; content: string }[] = [];
    const transcriber = new AudioTranscriber(
      {
        async transcribe(parts, fileName, mimeType) {
          seen.push({ parts: [...parts], fileName, mimeType, content: readFileSync(parts[0]!.path, 'utf8') });
          return heard;
        },
      },
      { spoolDir: spool, maxPartBytes: 1_000, ffmpeg: undefined, splitTimeoutMs: 1_000, concurrency: 1 },
    );
    await expect(transcriber.transcribe(audio('vid00000001', 'one ', 'two'))).resolves.toEqual(heard);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      fileName: 'vid00000001.webm',
      mimeType: 'audio/webm',
      content: 'one two',
    });
    expect(seen[0]!.parts[0]).toMatchObject({ startSeconds: 0, durationSeconds: 70 });
    expect(existsSync(seen[0]!.parts[0]!.path)).toBe(false);
    expect(readdirSync(spool)).toEqual([]);
  });

  it('removes the spooled audio when the model fails too', async () => {
    const transcriber = new AudioTranscriber(
      {
        transcribe: () => Promise.reject(new Error('model down')),
      },
      { spoolDir: spool, maxPartBytes: 1_000, ffmpeg: undefined, splitTimeoutMs: 1_000, concurrency: 1 },
    );
    await expect(transcriber.transcribe(audio('vid00000002', 'x'))).rejects.toThrow('model down');
    expect(readdirSync(spool)).toEqual([]);
  });

  it('holds transcriptions, download included, to the configured concurrency', async () => {
    let inFlight = 0;
    let most = 0;
    let downloading = 0;
    let mostDownloading = 0;
    async function* slowPieces(): AsyncGenerator<Uint8Array> {
      downloading += 1;
      mostDownloading = Math.max(mostDownloading, downloading);
      await new Promise((r) => setTimeout(r, 20));
      yield new Uint8Array(4);
      downloading -= 1;
    }
    const transcriber = new AudioTranscriber(
      {
        async transcribe() {
          inFlight += 1;
          most = Math.max(most, inFlight);
          await new Promise((r) => setTimeout(r, 20));
          inFlight -= 1;
          return heard;
        },
      },
      { spoolDir: spool, maxPartBytes: 1_000, ffmpeg: undefined, splitTimeoutMs: 1_000, concurrency: 2 },
    );
    await Promise.all(
      [1, 2, 3, 4, 5].map((i) =>
        transcriber.transcribe({ ...audio(`vid0000000${i}`), pieces: slowPieces() }),
      ),
    );
    expect(most).toBe(2);
    expect(mostDownloading).toBeLessThanOrEqual(2);
    expect(readdirSync(spool)).toEqual([]);
  });

  it('exports the transcriptions in flight and waiting, for an autoscaler of the speech engine', async () => {
    const sample = async (name: string) =>
      Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(await scrape())?.[1] ?? Number.NaN);
    const model = deferred<Transcription>();
    const transcriber = new AudioTranscriber(
      { transcribe: () => model.promise },
      { spoolDir: spool, maxPartBytes: 1_000, ffmpeg: undefined, splitTimeoutMs: 1_000, concurrency: 1 },
    );
    const unregister = registerTranscriptionQueue(() => ({
      inFlight: transcriber.inFlight,
      waiting: transcriber.waiting,
    }));
    try {
      const running = transcriber.transcribe(audio('vid00000011', 'x'));
      const queued = transcriber.transcribe(audio('vid00000012', 'y'));
      await new Promise((r) => setImmediate(r));
      expect(await sample('subx_transcription_in_flight')).toBe(1);
      expect(await sample('subx_transcription_waiting')).toBe(1);
      model.resolve(heard);
      await Promise.all([running, queued]);
      expect(await sample('subx_transcription_in_flight')).toBe(0);
      expect(await sample('subx_transcription_waiting')).toBe(0);
    } finally {
      unregister();
    }
  });
});
