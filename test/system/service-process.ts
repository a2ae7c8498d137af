/**
 * A service's entry point (services/<name>/src/main.ts, or the npm start launcher) as a child
 * process with every engine embedded unless the test names one, its output collected, for the
 * black-box start-up tests: a busy port, a bad setting, an engine that never answers.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const NODE_FLAGS = ['--disable-warning=ExperimentalWarning'];

/** What every child starts from: no engine, no model key, no exporter, /metrics on a free port. */
const BASE_ENV = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  // Suites run in parallel: the METRICS_PORT cases set their own.
  METRICS_PORT: '0',
  REDIS_URL: '',
  KAFKA_BROKERS: '',
  MONGO_URL: '',
  OPENAI_API_KEY: '',
  OTEL_EXPORTER_OTLP_ENDPOINT: '',
};

export interface ServiceProcess {
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (null after a signal). */
  exited: Promise<number | null>;
  kill(signal: NodeJS.Signals): void;
}

const running = new Set<ServiceProcess>();
// A test that failed half-way leaves no process behind for the next one.
afterEach(() => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts `script` (a path from the repository's root) with `env` over the defaults. */
export function startServiceProcess(script: string, env: Record<string, string | undefined>): ServiceProcess {
  const child = spawn(process.execPath, [...NODE_FLAGS, script], {
    cwd: root,
    env: { ...BASE_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const started: ServiceProcess = {
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    kill: (signal) => void child.kill(signal),
  };
  running.add(started);
  void exited.then(() => running.delete(started));
  return started;
}

/** Resolves with the child's exit code; fails after `ms` with what it printed (and kills it). */
export async function exitWithin(child: ServiceProcess, ms: number): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no exit within ${ms} ms:\n${child.stdout()}\n${child.stderr()}`));
    }, ms);
  });
  try {
    return await Promise.race([child.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `script` to its exit (bounded: 60 s): its code and everything it printed. */
export async function runToExit(
  script: string,
  env: Record<string, string | undefined>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = startServiceProcess(script, env);
  const code = await exitWithin(child, 60_000);
  return { code, stdout: child.stdout(), stderr: child.stderr() };
}
