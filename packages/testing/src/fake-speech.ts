/**
 * A stand-in OpenAI-compatible speech-to-text server on loopback: POST /v1/audio/transcriptions
 * answering `verbose_json`. It counts what a model would bill for (every upload it received, and
 * the ones whose caller hung up before the answer), and answers as the test sets it: speech (two
 * segments covering `seconds`), or silence (no segments: NO_SPEECH), after `delayMs` (a model
 * slower than a caller's deadline).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeSpeechOptions {
  /** What the model hears: speech (default) or nothing. */
  heard?: 'speech' | 'silence';
  /** The audio's length the answer states (default 70). */
  seconds?: number;
  /** Milliseconds before each answer (default 0). */
  delayMs?: number;
}

export interface FakeSpeech {
  /** Base URL including /v1, as TRANSCRIBE_BASE_URL expects it. */
  readonly baseUrl: string;
  /** Uploads received (each one the model would have processed and billed). */
  uploads(): number;
  /** Uploads whose caller closed the connection before the answer. */
  abandoned(): number;
  /** Changes how the following uploads are answered. */
  set(options: FakeSpeechOptions): void;
  close(): Promise<void>;
}

export async function startFakeSpeech(initial: FakeSpeechOptions = {}): Promise<FakeSpeech> {
  let options = { ...initial };
  let uploads = 0;
  let abandoned = 0;
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/audio/transcriptions') {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"no route"}}');
        return;
      }
      uploads += 1;
      const { heard = 'speech', seconds = 70, delayMs = 0 } = options;
      let answered = false;
      res.on('close', () => {
        if (!answered) abandoned += 1;
      });
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (res.destroyed) return;
        answered = true;
        const segments =
          heard === 'silence'
            ? []
            : [
                { id: 0, start: 0, end: seconds / 2, text: ' one two three' },
                { id: 1, start: seconds / 2, end: seconds, text: ' four five six' },
              ];
        const body = JSON.stringify({
          task: 'transcribe',
          language: 'english',
          duration: seconds,
          text: segments.map((s) => s.text).join(''),
          segments,
        });
        res.writeHead(200, { 'content-type': 'application/json' }).end(body);
      }, delayMs);
      timers.add(timer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    uploads: () => uploads,
    abandoned: () => abandoned,
    set(next) {
      options = { ...next };
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
