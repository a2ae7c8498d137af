/**
 * The speech engine the transcription suites run against: TRANSCRIBE_BASE_URL when set (the
 * engines script's), else services/speech installed (services/speech/install.sh, by hash from
 * PyPI, once) and started here on a free port.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const given = process.env.TRANSCRIBE_BASE_URL;
let installed: { python: string; error: string } | undefined;

/** The engine's venv python ('' when the install failed, with why in `error`). */
export function installEngine(): { python: string; error: string } {
  if (!installed) {
    const r = spawnSync('bash', [join(root, 'services/speech/install.sh')], {
      encoding: 'utf8',
      timeout: 900_000,
    });
    installed = {
      python: r.status === 0 ? r.stdout.trim() : '',
      error: (r.stderr || String(r.error ?? '')).trim().slice(-300),
    };
  }
  return installed;
}

/** Whether an engine can run: given, or installed. */
export const ready = Boolean(given) || installEngine().python !== '';

/** The model id the engine answers to (engines.sh exports it as TRANSCRIBE_MODEL). */
export const MODEL_ID = process.env.TRANSCRIBE_MODEL || 'whisper-tiny.en';

export interface StartedEngine {
  /** `http://127.0.0.1:PORT/v1` */
  url: string;
  /** The port of its METRICS_PORT listener, when one was asked for. */
  metricsPort?: number;
  child: ChildProcess;
  /** stderr so far (the last 8 KB). */
  log(): string;
}

/** Starts services/speech/server.py from the venv with extra environment; resolves once it listens. */
export async function spawnEngine(env: Record<string, string> = {}): Promise<StartedEngine> {
  const { python, error } = installEngine();
  if (!python) throw new Error(`services/speech/install.sh failed: ${error}`);
  const child = spawn(python, [join(root, 'services/speech/server.py'), '0'], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/',
      STT_CPU_THREADS: '2',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => {
    err = (err + d.toString()).slice(-8000);
  });
  let metricsPort: number | undefined;
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(
      () => reject(new Error(`the speech engine did not start within 90 s: ${err}`)),
      90_000,
    );
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)(?: \(metrics on port (\d+)\))?\n/.exec(out);
      if (m) {
        clearTimeout(timer);
        if (m[2]) metricsPort = Number(m[2]);
        resolve(`${m[1]}/v1`);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the speech engine exited with ${code}: ${err}`));
    });
  });
  child.stdout!.resume();
  return { url, metricsPort, child, log: () => err };
}

/** The engine's OpenAI-compatible base URL, and the process when it was started here. */
export async function startEngine(): Promise<{ url: string; child?: ChildProcess }> {
  if (given) return { url: given };
  return spawnEngine();
}
