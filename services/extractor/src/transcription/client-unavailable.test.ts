/**
 * An endpoint that is not there to answer yet (an engine scaled to zero, restarting, or full):
 * with TRANSCRIBE_UNAVAILABLE_WAIT_MS the request is sent again until it answers, within that
 * bound and the caller's signal; without it the first refusal fails, as before.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { AudioPart } from './audio-file.ts';
import { isModelVerdict, TranscriptionClient } from './client.ts';

const dir = mkdtempSync(join(tmpdir(), 'transcription-unavailable-'));
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function part(): AudioPart {
  const path = join(dir, `part-${Math.random().toString(36).slice(2)}.m4a`);
  writeFileSync(path, 'audio bytes');
  return { path, startSeconds: 0, durationSeconds: 70 };
}

/** A speech endpoint that answers 503 to its first `busy` uploads, then a transcript; counts uploads. */
function endpoint(busy = 0) {
  let uploads = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      uploads += 1;
      if (uploads <= busy) {
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"the engine is busy"}}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          language: 'english',
          duration: 70,
          segments: [{ id: 0, start: 0, end: 70, text: ' hello' }],
        }),
      );
    });
  });
  servers.push(server);
  return { server, uploads: () => uploads };
}

const listen = (server: Server, port = 0) =>
  new Promise<number>((resolve) =>
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );

/** A port nothing listens on now (taken and released). */
async function freePort(): Promise<number> {
  const probe = createServer();
  const port = await listen(probe);
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const clientFor = (port: number, unavailableWaitMs?: number) =>
  new TranscriptionClient({
    baseURL: `http://127.0.0.1:${port}/v1`,
    apiKey: undefined,
    model: 'whisper-1',
    timeoutMs: 5_000,
    ...(unavailableWaitMs === undefined ? {} : { unavailableWaitMs }),
  });

const failureOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (err: unknown) => err,
  );

describe('TranscriptionClient, an endpoint not there to answer', () => {
  it('waits for an endpoint that refuses connections until it listens', async () => {
    const port = await freePort();
    const { server, uploads } = endpoint();
    // The engine comes up after the first tries were refused.
    const started = Date.now();
    setTimeout(() => void listen(server, port), 1_500);
    const heard = await clientFor(port, 20_000).transcribe([part()], 'a.m4a', 'audio/mp4');
    expect(heard.segments.map((s) => s.text)).toEqual(['hello']);
    expect(uploads()).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
  });

  it('sends again after 503 answers, then takes the transcript', async () => {
    const { server, uploads } = endpoint(2);
    const port = await listen(server);
    const heard = await clientFor(port, 20_000).transcribe([part()], 'a.m4a', 'audio/mp4');
    expect(heard.durationSeconds).toBe(70);
    expect(uploads()).toBe(3);
  });

  it('fails at the first refusal without a wait (502, retryable, not a verdict on the audio)', async () => {
    const port = await freePort();
    const started = Date.now();
    const err = await failureOf(clientFor(port).transcribe([part()], 'a.m4a', 'audio/mp4'));
    expect(err).toMatchObject({ code: 'TRANSCRIPTION_FAILED', retryable: true });
    expect(isModelVerdict(err)).toBe(false);
    expect(Date.now() - started).toBeLessThan(1_000);
    const { server, uploads } = endpoint(1);
    const busyPort = await listen(server);
    expect(await failureOf(clientFor(busyPort).transcribe([part()], 'a.m4a', 'audio/mp4'))).toMatchObject({
      code: 'TRANSCRIPTION_FAILED',
    });
    expect(uploads()).toBe(1);
  });

  it('gives up when the wait is over, with the last failure', async () => {
    const port = await freePort();
    const started = Date.now();
    const err = await failureOf(clientFor(port, 2_000).transcribe([part()], 'a.m4a', 'audio/mp4'));
    const took = Date.now() - started;
    expect(err).toMatchObject({ code: 'TRANSCRIPTION_FAILED', retryable: true });
    expect(took).toBeGreaterThanOrEqual(1_900);
    expect(took).toBeLessThan(5_000);
  });

  it('stops waiting when the caller leaves', async () => {
    const port = await freePort();
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('left')), 500);
    const started = Date.now();
    const err = await failureOf(
      clientFor(port, 60_000).transcribe([part()], 'a.m4a', 'audio/mp4', controller.signal),
    );
    expect(err).toMatchObject({ code: 'TRANSCRIPTION_FAILED' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('does not send again what the model answered (a 500 is not unavailability)', async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"boom"}}');
      });
    });
    servers.push(server);
    let uploads = 0;
    server.on('request', () => (uploads += 1));
    const port = await listen(server);
    expect(await failureOf(clientFor(port, 20_000).transcribe([part()], 'a.m4a', 'audio/mp4'))).toMatchObject(
      { code: 'TRANSCRIPTION_FAILED' },
    );
    expect(uploads).toBe(1);
  });
});
