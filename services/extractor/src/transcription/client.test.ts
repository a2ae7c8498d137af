import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AudioPart } from './audio-file.ts';
import { isModelVerdict, languageCode, TranscriptionClient } from './client.ts';

/** A stand-in OpenAI-compatible speech server answering verbose_json. */
let server: Server;
let base = '';
let mode: 'ok' | 'empty' | 'fail' = 'ok';
/** Where the stand-in puts word times when asked: beside the segments (OpenAI), inside them, or nowhere. */
let wordsIn: 'answer' | 'segments' | 'none' = 'answer';
/** Whether each upload asked word granularity. */
const askedWords: boolean[] = [];
/** What each upload carried in its file field. */
const uploads: string[] = [];
const dir = mkdtempSync(join(tmpdir(), 'transcription-client-'));

let files = 0;
/** One part on disk holding `content` (a file of its own: the upload reads it as it was written). */
function part(content: string, startSeconds = 0, durationSeconds = 70): AudioPart {
  files += 1;
  const path = join(dir, `part-${files}.m4a`);
  writeFileSync(path, content);
  return { path, startSeconds, durationSeconds };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('latin1');
      const file = /name="file"; filename="[^"]*"\r\nContent-Type: [^\r]*\r\n\r\n([^\r]*)\r\n/.exec(body);
      uploads.push(file?.[1] ?? '');
      askedWords.push(/name="timestamp_granularities\[\]"\r\n\r\nword\r\n/.test(body));
      setTimeout(() => {
        if (req.url !== '/v1/audio/transcriptions' || !body.includes('verbose_json')) {
          res.writeHead(400).end();
          return;
        }
        if (mode === 'fail') {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end('{"error":{"message":"boom"}}');
          return;
        }
        const words = [
          { word: ' hello', start: 0.5, end: 1 },
          { word: ' world', start: 1.2, end: 4.6 },
          { word: ' second', start: 5, end: 6 },
          { word: ' part', start: 6, end: 7 },
        ];
        const nested = wordsIn === 'segments';
        const segments =
          mode === 'empty'
            ? []
            : [
                {
                  id: 0,
                  start: 0,
                  end: 4.5,
                  text: ' hello world',
                  ...(nested ? { words: words.slice(0, 2) } : {}),
                },
                {
                  id: 1,
                  start: 4.5,
                  end: 70,
                  text: ' second part',
                  ...(nested ? { words: words.slice(2) } : {}),
                },
              ];
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            task: 'transcribe',
            language: 'english',
            duration: 70,
            text: 'x',
            segments,
            ...(wordsIn === 'answer' && mode !== 'empty' ? { words } : {}),
          }),
        );
      }, 50);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

describe('languageCode', () => {
  it('maps OpenAI language names and keeps codes', () => {
    expect(languageCode('english')).toBe('en');
    expect(languageCode('pt-BR')).toBe('pt-br');
    expect(languageCode('')).toBe('und');
  });
});

describe('TranscriptionClient', () => {
  const client = () =>
    new TranscriptionClient({
      baseURL: base,
      apiKey: undefined,
      model: 'whisper-1',
      timeoutMs: 5_000,
    });

  it('answers segments with timings and the detected language', async () => {
    mode = 'ok';
    wordsIn = 'none';
    uploads.length = 0;
    const t = await client().transcribe([part('audio bytes')], 'a.m4a', 'audio/mp4');
    expect(uploads).toEqual(['audio bytes']);
    expect(t).toEqual({
      language: 'en',
      durationSeconds: 70,
      segments: [
        { start: 0, duration: 4.5, text: 'hello world' },
        { start: 4.5, duration: 65.5, text: 'second part' },
      ],
    });
  });

  it.each(['answer', 'segments'] as const)(
    'asks word granularity; words %s go to their segments, timed from the part’s start',
    async (where) => {
      mode = 'ok';
      wordsIn = where;
      askedWords.length = 0;
      const t = await client().transcribe([part('a', 70, 70)], 'a.m4a', 'audio/mp4');
      expect(askedWords).toEqual([true]);
      // ' world' ends past the first segment: its middle (72.9) is inside it, so it stays there
      expect(t.segments.map((s) => s.words)).toEqual([
        [
          { text: 'hello', start: 70.5, end: 71 },
          { text: 'world', start: 71.2, end: 74.6 },
        ],
        [
          { text: 'second', start: 75, end: 76 },
          { text: 'part', start: 76, end: 77 },
        ],
      ]);
    },
  );

  it('fails retryably on a model error and with NO_SPEECH on no segments', async () => {
    mode = 'fail';
    await expect(client().transcribe([part('x')], 'a.m4a', 'audio/mp4')).rejects.toMatchObject({
      code: 'TRANSCRIPTION_FAILED',
      retryable: true,
    });
    mode = 'empty';
    await expect(client().transcribe([part('x')], 'a.m4a', 'audio/mp4')).rejects.toMatchObject({
      code: 'NO_SPEECH',
    });
  });

  it('uploads every part in order and times its segments from the part’s start', async () => {
    mode = 'ok';
    uploads.length = 0;
    const t = await client().transcribe([part('first', 0, 70), part('second', 70, 70)], 'a.m4a', 'audio/mp4');
    expect(uploads).toEqual(['first', 'second']);
    expect(t.durationSeconds).toBe(140);
    expect(t.segments.map((s) => s.start)).toEqual([0, 4.5, 70, 74.5]);
    expect(t.segments.map((s) => s.duration)).toEqual([4.5, 65.5, 4.5, 65.5]);
  });

  it('fails retryably when the answer stops well short of the audio sent', async () => {
    mode = 'ok';
    // The stand-in answers 70 s for a part of 100 s: 30 s missing is more than 10% or 5 s.
    await expect(client().transcribe([part('x', 0, 100)], 'a.m4a', 'audio/mp4')).rejects.toMatchObject({
      code: 'TRANSCRIPTION_FAILED',
      retryable: true,
      message: expect.stringMatching(/cut short/),
    });
    // Within the allowance (the platform's length and the decoder's differ by padding): accepted.
    await expect(client().transcribe([part('x', 0, 74)], 'a.m4a', 'audio/mp4')).resolves.toMatchObject({
      durationSeconds: 70,
    });
  });

  it('tells the model’s verdicts on the audio (remembered) from outages (asked again)', async () => {
    const failureOf = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (err: unknown) => err,
      );
    mode = 'empty';
    expect(isModelVerdict(await failureOf(client().transcribe([part('x')], 'a.m4a', 'audio/mp4')))).toBe(
      true,
    );
    mode = 'ok';
    expect(
      isModelVerdict(await failureOf(client().transcribe([part('x', 0, 100)], 'a.m4a', 'audio/mp4'))),
    ).toBe(true);
    mode = 'fail';
    expect(isModelVerdict(await failureOf(client().transcribe([part('x')], 'a.m4a', 'audio/mp4')))).toBe(
      false,
    );
    const unreachable = new TranscriptionClient({
      baseURL: 'http://127.0.0.1:1/v1',
      apiKey: undefined,
      model: 'whisper-1',
      timeoutMs: 2_000,
    });
    expect(isModelVerdict(await failureOf(unreachable.transcribe([part('x')], 'a.m4a', 'audio/mp4')))).toBe(
      false,
    );
  });

  it('stops the model’s request when its signal aborts', async () => {
    mode = 'ok';
    const controller = new AbortController();
    const pending = client().transcribe([part('x')], 'a.m4a', 'audio/mp4', controller.signal);
    controller.abort(new Error('left'));
    const err = await pending.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'TRANSCRIPTION_FAILED' });
    expect(isModelVerdict(err)).toBe(false);
  });
});
