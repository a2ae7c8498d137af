/**
 * The demo's speech-to-text when it cannot run its engine: the banner says so, why, and how to turn
 * it on, and nothing is set for the services. (With the engine installed: test/speech/demo-transcription.test.ts.)
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { speechBannerLine, startDemoSpeech } from './demo-speech.ts';

const dir = mkdtempSync(join(tmpdir(), 'demo-speech-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the demo speech engine', () => {
  it('is off, saying how to install it, when its venv is missing', async () => {
    const server = join(dir, 'server.py');
    writeFileSync(server, '');
    const env: NodeJS.ProcessEnv = { DEMO_STT_SERVER: server, STT_VENV: join(dir, 'no-venv') };
    const speech = await startDemoSpeech(env);
    expect(speech.state).toBe('off');
    expect(env.TRANSCRIBE_BASE_URL).toBeUndefined();
    expect(speechBannerLine(speech, 'synthSpeech')).toBe(
      '  speech-to-text: off, the speech engine is not installed (bash scripts/engines.sh up stt installs it once); or set TRANSCRIBE_BASE_URL',
    );
  });

  it('is off, saying why, when the installed engine does not start', async () => {
    const venv = join(dir, 'venv');
    const python = join(venv, 'bin', 'python');
    mkdirSync(join(venv, 'bin'), { recursive: true });
    writeFileSync(
      python,
      '#!/bin/sh\necho "speech: bad settings: STT_MODEL_DIR is not a model" >&2\nexit 2\n',
    );
    chmodSync(python, 0o755);
    const env: NodeJS.ProcessEnv = { DEMO_STT_SERVER: python, STT_VENV: venv, PATH: process.env.PATH };
    const speech = await startDemoSpeech(env);
    expect(speech.state).toBe('off');
    expect(env.TRANSCRIBE_BASE_URL).toBeUndefined();
    expect(speechBannerLine(speech, 'synthSpeech')).toMatch(
      /^ {2}speech-to-text: off, the speech engine did not start: speech: bad settings: STT_MODEL_DIR is not a model \(bash scripts\/engines\.sh up stt/,
    );
  });

  it('names the endpoint it was given instead of starting one', async () => {
    const env: NodeJS.ProcessEnv = { TRANSCRIBE_BASE_URL: 'https://api.example/v1' };
    const speech = await startDemoSpeech(env);
    expect(speech.state).toBe('given');
    expect(speechBannerLine(speech, 'synthSpeech')).toBe(
      '  speech-to-text: https://api.example/v1 (TRANSCRIBE_BASE_URL); captionless video with speech: synthSpeech (mode "auto")',
    );
  });

  it('is off when DEMO_SPEECH=0', async () => {
    const speech = await startDemoSpeech({ DEMO_SPEECH: '0' });
    expect(speechBannerLine(speech, 'synthSpeech')).toBe(
      '  speech-to-text: off, DEMO_SPEECH=0; or set TRANSCRIBE_BASE_URL',
    );
  });
});
