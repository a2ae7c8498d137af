/**
 * The demo's speech-to-text engine: scripts/stt-server (PocketSphinx behind OpenAI's transcription
 * API; `DEMO_STT_SERVER` names its server.py, set by the `npm run demo` entry) started from its
 * virtual environment when that exists and TRANSCRIBE_BASE_URL is not set, so
 * the demo's captionless video (`synthSpeech`) can be transcribed offline. Without the venv the
 * demo runs as before (make it with `bash scripts/stt-server/install.sh`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';

const START_TIMEOUT_MS = 30_000;

export interface DemoSpeech {
  /** `http://127.0.0.1:PORT/v1`, what TRANSCRIBE_BASE_URL was set to. */
  baseUrl: string;
  close(): void;
}

function venvPython(env: NodeJS.ProcessEnv): string {
  const cache = env.ENGINES_CACHE || `${homedir()}/.cache/subx-engines`;
  return `${env.STT_VENV || `${cache}/stt-venv`}/bin/python`;
}

/** Starts the engine and sets TRANSCRIBE_BASE_URL / TRANSCRIBE_MODEL; null when it cannot run. */
export async function startDemoSpeech(env: NodeJS.ProcessEnv): Promise<DemoSpeech | null> {
  if (env.TRANSCRIBE_BASE_URL || env.DEMO_SPEECH === '0') return null;
  // The server's path comes from the entry (scripts/start-embedded.ts): services read no scripts.
  const server = env.DEMO_STT_SERVER;
  const python = venvPython(env);
  if (!server || !existsSync(python) || !existsSync(server)) return null;
  const child: ChildProcess = spawn(python, [server, '0'], {
    env: { PATH: env.PATH ?? '/usr/bin:/bin', STT_HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const stop = () => {
    if (child.exitCode === null) child.kill('SIGTERM');
  };
  process.once('exit', stop);
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
    return null;
  }
  child.stdout?.resume();
  env.TRANSCRIBE_BASE_URL = `${url}/v1`;
  env.TRANSCRIBE_MODEL ||= 'pocketsphinx-en-us';
  return {
    baseUrl: env.TRANSCRIBE_BASE_URL,
    close: () => {
      stop();
      process.removeListener('exit', stop);
    },
  };
}
