/**
 * The demo's speech-to-text: the speech engine (services/speech: faster-whisper behind OpenAI's
 * transcription API; `DEMO_STT_SERVER` names its server.py, set by the `npm run demo` entry) started
 * from its virtual environment when that exists and TRANSCRIBE_BASE_URL is not set, so that the
 * demo's captionless video (`synthSpeech`) is transcribed offline. Must run before the services
 * copy the environment: it sets TRANSCRIBE_BASE_URL and TRANSCRIBE_MODEL.
 *
 * The venv is what `bash scripts/engines.sh up stt` (or services/speech/install.sh) makes once; the
 * demo never downloads it. Without it the demo runs without transcription and its banner says how
 * to turn it on.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';

/** Loading the model takes 2-10 s; a busy machine may need more. */
const START_TIMEOUT_MS = 90_000;
const BUNDLED_MODEL_ID = 'whisper-tiny.en';
const INSTALL_HINT = 'bash scripts/engines.sh up stt installs it once';

export type DemoSpeech =
  | { state: 'started'; baseUrl: string; model: string; close(): void }
  | { state: 'given'; baseUrl: string; close(): void }
  | { state: 'off'; reason: string; close(): void };

const off = (reason: string): DemoSpeech => ({ state: 'off', reason, close: () => {} });

function venvPython(env: NodeJS.ProcessEnv): string {
  const cache = env.ENGINES_CACHE || `${homedir()}/.cache/subx-engines`;
  return `${env.STT_VENV || `${cache}/speech-venv`}/bin/python`;
}

/** Starts the engine and sets TRANSCRIBE_BASE_URL / TRANSCRIBE_MODEL, or says why there is none. */
export async function startDemoSpeech(env: NodeJS.ProcessEnv): Promise<DemoSpeech> {
  if (env.TRANSCRIBE_BASE_URL) return { state: 'given', baseUrl: env.TRANSCRIBE_BASE_URL, close: () => {} };
  if (env.DEMO_SPEECH === '0') return off('DEMO_SPEECH=0');
  // The server's path comes from the entry (scripts/start-embedded.ts): services read no scripts.
  const server = env.DEMO_STT_SERVER;
  const python = venvPython(env);
  if (!server || !existsSync(server)) return off('the speech engine is not in this checkout');
  if (!existsSync(python)) return off(`the speech engine is not installed (${INSTALL_HINT})`);
  const child: ChildProcess = spawn(python, [server, '0'], {
    env: {
      PATH: env.PATH ?? '/usr/bin:/bin',
      HOME: env.HOME ?? homedir(),
      HF_HUB_OFFLINE: '1',
      STT_HOST: '127.0.0.1',
      ...(env.STT_MODEL_DIR ? { STT_MODEL_DIR: env.STT_MODEL_DIR } : {}),
      ...(env.STT_MODEL_ID ? { STT_MODEL_ID: env.STT_MODEL_ID } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stop = () => {
    if (child.exitCode === null) child.kill('SIGTERM');
  };
  process.once('exit', stop);
  let errors = '';
  child.stderr?.on('data', (d: Buffer) => {
    errors = (errors + d.toString()).slice(-2000);
  });
  const url = await new Promise<string | null>((resolve) => {
    let out = '';
    const timer = setTimeout(() => resolve(null), START_TIMEOUT_MS);
    child.stdout?.on('data', (d: Buffer) => {
      out = (out + d.toString()).slice(-1000);
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('error', () => {
      clearTimeout(timer);
      resolve(null);
    });
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(null);
    });
  });
  if (!url) {
    stop();
    process.removeListener('exit', stop);
    const last = errors.trim().split('\n').at(-1)?.slice(0, 200);
    return off(`the speech engine did not start${last ? `: ${last}` : ''} (${INSTALL_HINT} again)`);
  }
  child.stdout?.resume();
  // Only its own lines from now on: the engine logs a line per request.
  child.stderr?.removeAllListeners('data');
  child.stderr?.resume();
  const model = /speech: (\S+) \(/.exec(errors)?.[1] ?? env.STT_MODEL_ID ?? BUNDLED_MODEL_ID;
  env.TRANSCRIBE_BASE_URL = `${url}/v1`;
  env.TRANSCRIBE_MODEL ||= model;
  return {
    state: 'started',
    baseUrl: env.TRANSCRIBE_BASE_URL,
    model,
    close: () => {
      stop();
      process.removeListener('exit', stop);
    },
  };
}

/** The banner's line about speech-to-text: what runs, or why nothing does and how to change it. */
export function speechBannerLine(speech: DemoSpeech, videoId: string): string {
  switch (speech.state) {
    case 'started':
      return `  speech-to-text: ${speech.baseUrl} (faster-whisper ${speech.model}, services/speech); captionless video with speech: ${videoId} (mode "auto")`;
    case 'given':
      return `  speech-to-text: ${speech.baseUrl} (TRANSCRIBE_BASE_URL); captionless video with speech: ${videoId} (mode "auto")`;
    case 'off':
      return `  speech-to-text: off, ${speech.reason}; or set TRANSCRIBE_BASE_URL`;
  }
}
