import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { languageCode, TranscriptionClient } from './client.ts';

/** A stand-in OpenAI-compatible speech server answering verbose_json. */
let server: Server;
let base = '';
let calls = 0;
let inFlight = 0;
let maxInFlight = 0;
let mode: 'ok' | 'empty' | 'fail' = 'ok';

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      calls += 1;
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const body = Buffer.concat(chunks).toString('latin1');
      setTimeout(() => {
        inFlight -= 1;
        if (req.url !== '/v1/audio/transcriptions' || !body.includes('verbose_json')) {
          res.writeHead(400).end();
          return;
        }
        if (mode === 'fail') {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end('{"error":{"message":"boom"}}');
          return;
        }
        const segments =
          mode === 'empty'
            ? []
            : [
                { id: 0, start: 0, end: 4.5, text: ' hello world' },
                { id: 1, start: 4.5, end: 70, text: ' second part' },
              ];
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ task: 'transcribe', language: 'english', duration: 70, text: 'x', segments }),
        );
      }, 50);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

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
      concurrency: 1,
    });

  it('answers segments with timings and the detected language', async () => {
    mode = 'ok';
    const t = await client().transcribe([new Uint8Array([1, 2, 3])], 'a.m4a');
    expect(t).toEqual({
      language: 'en',
      durationSeconds: 70,
      segments: [
        { start: 0, duration: 4.5, text: 'hello world' },
        { start: 4.5, duration: 65.5, text: 'second part' },
      ],
    });
  });

  it('fails retryably on a model error and with NO_SPEECH on no segments', async () => {
    mode = 'fail';
    await expect(client().transcribe([new Uint8Array(1)], 'a.m4a')).rejects.toMatchObject({
      code: 'TRANSCRIPTION_FAILED',
      retryable: true,
    });
    mode = 'empty';
    await expect(client().transcribe([new Uint8Array(1)], 'a.m4a')).rejects.toMatchObject({
      code: 'NO_SPEECH',
    });
  });

  it('holds concurrent calls to the configured concurrency', async () => {
    mode = 'ok';
    const c = client();
    maxInFlight = 0;
    const before = calls;
    await Promise.all([1, 2, 3].map(() => c.transcribe([new Uint8Array(1)], 'a.m4a')));
    expect(calls - before).toBe(3);
    expect(maxInFlight).toBe(1);
  });
});
