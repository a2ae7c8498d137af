/**
 * `npm run demo` with the speech engine installed transcribes its captionless video: the banner
 * names the engine it started, and the README's speech call (the one on `synthSpeech`), run
 * verbatim with curl, answers the transcript of what the video says. (Without the engine the
 * banner says it is off and why: services/embedded/src/demo-speech.test.ts.)
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnLauncher, type Launcher } from '@subx/embedded/launcher';
import { recordRequirement } from '@subx/testing/engines';
import { wordErrorRate } from '@subx/testing/speech';
import { installEngine } from './speech-engine.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const { python, error } = installEngine();
const ready = python !== '';

/** The README's curl call on the demo's captionless video, continuation lines joined. */
function readmeSpeechCall(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8').replace(/\\\n\s*/g, '');
  const line = readme.split('\n').find((l) => l.startsWith('curl ') && l.includes('synthSpeech'));
  if (!line) throw new Error('README.md has no curl call on synthSpeech');
  return line.trim();
}

describe.skipIf(!ready && !process.env.CI)('npm run demo with the speech engine installed', () => {
  recordRequirement({
    kind: 'tool',
    name: 'speech engine (faster-whisper)',
    ran: ready || !!process.env.CI,
    reason: `services/speech/install.sh failed: ${error}`,
    enable: 'bash scripts/engines.sh up stt',
  });
  let launcher: Launcher;
  let address = '';

  beforeAll(async () => {
    expect(python, error).not.toBe('');
    launcher = spawnLauncher(['--demo'], {
      PORT: '0',
      LOG_LEVEL: 'error',
      YOUTUBE_BASE_URL: '',
      REDIS_URL: '',
      KAFKA_BROKERS: '',
      MONGO_URL: '',
      TRANSCRIBE_BASE_URL: '',
      // What scripts/start-embedded.ts (the `npm run demo` entry) sets.
      DEMO_STT_SERVER: join(root, 'services/speech/server.py'),
      STT_VENV: dirname(dirname(python)),
    });
    await launcher.waitFor(/Ctrl-C stops everything/, 150_000);
    address = /subx is running at http:\/\/([^\s/]+)/.exec(launcher.output())![1]!;
  }, 180_000);
  afterAll(async () => {
    await launcher?.stop();
  });

  it('names the engine in its banner and transcribes synthSpeech with the README call', async () => {
    expect(launcher.output()).toMatch(
      /speech-to-text: http:\/\/127\.0\.0\.1:\d+\/v1 \(faster-whisper whisper-tiny\.en, services\/speech\); captionless video with speech: synthSpeech/,
    );
    const command = readmeSpeechCall().replaceAll('localhost:8080', address);
    expect(command).not.toMatch(/[|;&]\s|&&|`|\$\(/);
    const { stdout, code, stderr } = await new Promise<{ stdout: string; code: number; stderr: string }>(
      (resolve) =>
        execFile(
          'bash',
          ['-c', `${command} -w '\\n%{http_code}'`],
          { timeout: 120_000 },
          (err, out, errOut) => resolve({ stdout: out, code: err ? Number(err.code) : 0, stderr: errOut }),
        ),
    );
    expect(code, stderr).toBe(0);
    const status = stdout.slice(stdout.lastIndexOf('\n') + 1);
    const body = stdout.slice(0, stdout.lastIndexOf('\n'));
    expect(status, body).toBe('200');
    const spoken = readFileSync(join(root, 'packages/testing/audio/speech.txt'), 'utf8');
    expect(wordErrorRate(spoken, body), body).toBeLessThanOrEqual(0.15);
  }, 180_000);
});
