/**
 * The one-process launcher (`npm start`, `npm run demo`: main.ts beside this file) as a child
 * process, for black-box tests: its output is collected (bounded), `waitFor` waits (bounded) for a
 * line of the banner, `stop` sends SIGTERM, escalates to SIGKILL after `killAfterMs`, and waits for
 * the exit. One place for every suite that runs the real launcher (system, fault, dashboard tests).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const main = fileURLToPath(new URL('./main.ts', import.meta.url));
/** What the launcher printed, at most (a chatty child must not grow the test's memory). */
const OUTPUT_CAP = 200_000;

/**
 * `npm start` as a test wants it by default: every port free (API, admin API, dashboard; /metrics is free in
 * any case), every engine embedded, no model key, whatever the test process's environment says.
 */
export const EMBEDDED_ENV: Readonly<Record<string, string>> = {
  PORT: '0',
  ADMIN_PORT: '0',
  DASHBOARD_PORT: '0',
  REDIS_URL: '',
  KAFKA_BROKERS: '',
  MONGO_URL: '',
  OPENAI_API_KEY: '',
};

export interface Launcher {
  child: ChildProcess;
  /** The last OUTPUT_CAP characters written to stdout and stderr. */
  output(): string;
  /** The first match of `pattern` in the output; throws when the process exits or time is up. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray>;
  stop(): Promise<void>;
}

/**
 * `env` is laid over the test process's environment, and over /metrics on a free port (suites run
 * in parallel; a test that wants another port says so). `nodeFlags` go before the launcher's path
 * (`--import` of a preload).
 */
export function spawnLauncher(
  args: string[],
  env: Record<string, string>,
  options: { killAfterMs?: number; nodeFlags?: readonly string[] } = {},
): Launcher {
  let output = '';
  const flags = ['--disable-warning=ExperimentalWarning', ...(options.nodeFlags ?? [])];
  const child = spawn(process.execPath, [...flags, main, ...args], {
    cwd: root,
    env: { ...process.env, METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-OUTPUT_CAP);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return {
    child,
    output: () => output,
    async waitFor(pattern, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = pattern.exec(output);
        if (match) return match;
        if (child.exitCode !== null)
          throw new Error(`the launcher exited with ${child.exitCode}:\n${output}`);
        if (Date.now() > deadline)
          throw new Error(`the launcher did not print ${pattern} in ${timeoutMs} ms:\n${output}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs ?? 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
