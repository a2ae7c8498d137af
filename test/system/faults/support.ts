/**
 * The fault suite's system under test: the real `npm start` launcher (scripts/start-embedded.ts)
 * as a child process, pointed at engines and a fake platform that each test owns, so breaking
 * them never disturbs another suite.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../../../', import.meta.url));
export const ADMIN_TOKEN = 'fault-suite-admin-token-0123456789';

export interface RunningSystem {
  base: string;
  apiKey: string;
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/** Starts `npm start` with `env` over an embedded default (no engines, silent-ish logs). */
export async function startSystem(env: Record<string, string>, timeoutMs = 60_000): Promise<RunningSystem> {
  let output = '';
  const child = spawn(
    process.execPath,
    [
      '--disable-warning=ExperimentalWarning',
      '--disable-warning=TimeoutNegativeWarning',
      'scripts/start-embedded.ts',
    ],
    {
      cwd: root,
      env: {
        ...process.env,
        PORT: '0',
        ADMIN_TOKEN,
        LOG_LEVEL: 'error',
        REDIS_URL: '',
        KAFKA_BROKERS: '',
        MONGO_URL: '',
        OPENAI_API_KEY: '',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const keep = (d: Buffer) => {
    // Bounded: a chatty child must not grow the test's memory.
    output = (output + d.toString()).slice(-200_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const base = /subx is running at (http:\/\/[^\s]+)/.exec(output)?.[1];
    const apiKey = /pro API key:\s+(sxk_v1_[A-Za-z0-9]{32})/.exec(output)?.[1];
    if (base && apiKey) return { base, apiKey, child, output: () => output, stop };
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error(`npm start did not come up within ${timeoutMs} ms:\n${output}`);
}

/** A request with its wall time; the request itself is bounded by `abortAfterMs` (a hang fails). */
export async function timedFetch(
  url: string,
  init: RequestInit = {},
  abortAfterMs = 20_000,
): Promise<{ ms: number; status: number; body: Record<string, unknown>; headers: Headers }> {
  const t0 = performance.now();
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(abortAfterMs) });
  const text = await res.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { raw: text };
  }
  return { ms: performance.now() - t0, status: res.status, body, headers: res.headers };
}

export const jsonPost = (apiKey: string, body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
  body: JSON.stringify(body),
});
