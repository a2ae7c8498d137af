/**
 * The one-process launcher (`npm start`, `npm run demo`: scripts/start-embedded.ts) as a child
 * process, for black-box system tests: its output is collected, `waitFor` waits (bounded) for a
 * line of the banner, `stop` sends SIGTERM and waits for the graceful exit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

export interface Launcher {
  child: ChildProcess;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** The first match of `pattern` in the output; throws when the process exits or time is up. */
  waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray>;
  stop(): Promise<void>;
}

export function spawnLauncher(args: string[], env: Record<string, string>): Launcher {
  let output = '';
  const child = spawn(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', 'scripts/start-embedded.ts', ...args],
    // /metrics on a free port unless the test says otherwise: suites run in parallel
    { cwd: root, env: { ...process.env, METRICS_PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
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
      await exited;
    },
  };
}
