/**
 * The speech engine (scripts/stt-server) on real audio: espeak-ng's reading of
 * packages/testing/audio/speech.txt, encoded as the platform serves audio-only formats. What a real
 * recogniser can be held to: most of the spoken digits come back, timings are monotonic and inside
 * the audio, the answers have OpenAI's shapes, and the limits and the key are enforced.
 *
 * The suite starts its own server from the engine's virtual environment (scripts/stt-server/install.sh
 * creates it from PyPI once), with a key and a small request limit. Outside CI it is skipped, with
 * the reason in the summary, when the environment cannot be made (no python3-venv, no network); in
 * CI that is a failure.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { recordRequirement } from '@subx/testing/engines';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const AUDIO = join(root, 'packages/testing/audio');
const KEY = 'test-key-for-the-speech-engine';
const MAX_REQUEST_BYTES = 2_000_000;
const DIGITS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];

const install = spawnSync('bash', [join(root, 'scripts/stt-server/install.sh')], {
  encoding: 'utf8',
  timeout: 300_000,
});
const python = install.status === 0 ? install.stdout.trim() : '';
const ready = python !== '';

interface VerboseSegment {
  id: number;
  seek: number;
  start: number;
  end: number;
  text: string;
  tokens: number[];
  temperature: number;
  avg_logprob: number;
  compression_ratio: number;
  no_speech_prob: number;
}
interface Verbose {
  task: string;
  language: string;
  duration: number;
  text: string;
  segments: VerboseSegment[];
  words?: { word: string; start: number; end: number }[];
}

function words(text: string): string[] {
  return text.toLowerCase().match(/[a-z']+/g) ?? [];
}

/** Share of the spoken digit words (with repetitions) found in the recognised text. */
function digitRecall(spoken: string, heard: string): number {
  const count = (ws: string[]) => {
    const m = new Map<string, number>();
    for (const w of ws) if (DIGITS.includes(w)) m.set(w, (m.get(w) ?? 0) + 1);
    return m;
  };
  const want = count(words(spoken));
  const got = count(words(heard));
  let total = 0;
  let hit = 0;
  for (const [w, n] of want) {
    total += n;
    hit += Math.min(n, got.get(w) ?? 0);
  }
  return hit / total;
}

function form(file: Blob, name: string, fields: Record<string, string> = {}): FormData {
  const f = new FormData();
  f.set('file', file, name);
  f.set('model', 'pocketsphinx-en-us');
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  return f;
}

describe.skipIf(!ready && !process.env.CI)('speech engine: OpenAI transcription API on PocketSphinx', () => {
  recordRequirement({
    kind: 'tool',
    name: 'pocketsphinx',
    ran: ready || !!process.env.CI,
    reason: `scripts/stt-server/install.sh failed: ${(install.stderr || String(install.error ?? '')).trim().slice(-300)}`,
    enable: 'bash scripts/stt-server/install.sh',
  });

  let server: ChildProcess | undefined;
  let base = '';
  const auth = { Authorization: `Bearer ${KEY}` };
  const spoken = readFileSync(join(AUDIO, 'speech.txt'), 'utf8');

  beforeAll(async () => {
    expect(install.status, install.stderr).toBe(0);
    const child = spawn(python, [join(root, 'scripts/stt-server/server.py'), '0'], {
      env: { ...process.env, STT_API_KEY: KEY, STT_MAX_REQUEST_BYTES: String(MAX_REQUEST_BYTES) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server = child;
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-4000);
    });
    base = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`no "listening on" within 30 s: ${err}`)), 30_000);
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(`${m[1]}/v1`);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the server exited with ${code}: ${err}`));
      });
    });
  }, 60_000);

  afterAll(() => {
    server?.kill('SIGTERM');
  });

  it('transcribes the spoken WebM (Opus) with segments in order and inside the audio', async () => {
    const audio = new Blob([readFileSync(join(AUDIO, 'speech.webm'))], { type: 'audio/webm' });
    const res = await fetch(`${base}/audio/transcriptions`, {
      method: 'POST',
      headers: auth,
      body: form(audio, 'speech.webm', { response_format: 'verbose_json', language: 'en', temperature: '0' }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = (await res.json()) as Verbose;
    expect(body.task).toBe('transcribe');
    expect(body.language).toBe('english');
    expect(body.duration).toBeGreaterThan(68);
    expect(body.duration).toBeLessThan(72);
    expect(digitRecall(spoken, body.text), body.text).toBeGreaterThanOrEqual(0.6);
    expect(body.segments.length).toBeGreaterThan(5);
    let previousEnd = 0;
    body.segments.forEach((s, i) => {
      expect(Object.keys(s).sort()).toEqual(
        [
          'avg_logprob',
          'compression_ratio',
          'end',
          'id',
          'no_speech_prob',
          'seek',
          'start',
          'temperature',
          'text',
          'tokens',
        ].sort(),
      );
      expect(s.id).toBe(i);
      expect(s.start).toBeGreaterThanOrEqual(previousEnd);
      expect(s.end).toBeGreaterThan(s.start);
      expect(s.end).toBeLessThanOrEqual(body.duration);
      expect(s.text.trim()).not.toBe('');
      expect(s.tokens).toEqual([]);
      expect(s.no_speech_prob).toBeGreaterThanOrEqual(0);
      previousEnd = s.end;
    });
    // The segments' texts are the whole text, in order.
    expect(body.segments.map((s) => s.text.trim()).join(' ')).toBe(body.text);
    // Speech starts within the first seconds and ends near the end of the audio.
    expect(body.segments[0]!.start).toBeLessThan(3);
    expect(body.segments.at(-1)!.end).toBeGreaterThan(body.duration - 5);
  }, 240_000);

  it('transcribes the spoken m4a (AAC) as text, and a 12-second cut as json', async () => {
    const audio = new Blob([readFileSync(join(AUDIO, 'speech.m4a'))], { type: 'audio/mp4' });
    const plain = await fetch(`${base}/audio/transcriptions`, {
      method: 'POST',
      headers: auth,
      body: form(audio, 'speech.m4a', { response_format: 'text' }),
    });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await plain.text();
    // AAC at 32 kbps of synthetic speech: PocketSphinx gets about half the digits (see make-speech.sh).
    expect(digitRecall(spoken, text), text).toBeGreaterThanOrEqual(0.35);

    const cut = spawnSync(
      'ffmpeg',
      ['-v', 'error', '-i', join(AUDIO, 'speech.webm'), '-t', '12', '-c', 'copy', '-f', 'webm', '-'],
      {
        maxBuffer: 4 << 20,
        timeout: 30_000,
      },
    );
    expect(cut.status, String(cut.stderr)).toBe(0);
    const json = await fetch(`${base}/audio/transcriptions`, {
      method: 'POST',
      headers: auth,
      body: form(new Blob([cut.stdout], { type: 'audio/webm' }), 'a.webm'),
    });
    expect(json.status).toBe(200);
    const { text: first, ...rest } = (await json.json()) as { text: string };
    expect(rest).toEqual({});
    // The first sentence: one to ten.
    expect(
      digitRecall('one two three four five six seven eight nine ten', first),
      first,
    ).toBeGreaterThanOrEqual(0.6);
  }, 240_000);

  it('answers 413 with an OpenAI error for a body over the limit', async () => {
    const big = new Blob([new Uint8Array(MAX_REQUEST_BYTES + 1000)]);
    const res = await fetch(`${base}/audio/transcriptions`, {
      method: 'POST',
      headers: auth,
      body: form(big, 'big.m4a'),
    });
    expect(res.status).toBe(413);
    const { error } = (await res.json()) as { error: { message: string; type: string; code: string } };
    expect(error.code).toBe('request_too_large');
    expect(error.type).toBe('invalid_request_error');
    expect(error.message).toContain(String(MAX_REQUEST_BYTES));
  });

  it('answers 400 for bytes that are not audio, and for a missing file', async () => {
    const garbage = new Blob([Buffer.from('this is not audio at all, just text '.repeat(100))]);
    const bad = await fetch(`${base}/audio/transcriptions`, {
      method: 'POST',
      headers: auth,
      body: form(garbage, 'x.m4a'),
    });
    expect(bad.status).toBe(400);
    const badBody = (await bad.json()) as { error: { code: string; message: string } };
    expect(badBody.error.code).toBe('invalid_audio');
    expect(badBody.error.message).not.toContain('/tmp/');
    const none = new FormData();
    none.set('model', 'x');
    const missing = await fetch(`${base}/audio/transcriptions`, {
      method: 'POST',
      headers: auth,
      body: none,
    });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('missing_file');
  });

  it('requires the bearer key when one is set, except for /health', async () => {
    const audio = new Blob([Buffer.from('x')]);
    for (const headers of [{}, { Authorization: 'Bearer wrong' }]) {
      const res = await fetch(`${base}/audio/transcriptions`, {
        method: 'POST',
        headers,
        body: form(audio, 'a.m4a'),
      });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_api_key');
    }
    expect((await fetch(`${base}/models`)).status).toBe(401);
    const models = (await (await fetch(`${base}/models`, { headers: auth })).json()) as {
      data: { id: string }[];
    };
    expect(models.data.map((m) => m.id)).toEqual(['pocketsphinx-en-us']);
    const health = await fetch(base.replace(/\/v1$/, '/health'));
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok', model: 'pocketsphinx-en-us' });
  });
});
