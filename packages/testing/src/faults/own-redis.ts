import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../free-port.ts';
import { waitFor } from '../wait.ts';

/**
 * A private redis-server for fault tests: its own port and data directory, so freezing
 * (SIGSTOP), killing or restarting it never disturbs another suite. Needs `redis-server` on PATH
 * (scripts/engines.sh installs Debian's); `redisServerAvailable()` tells whether it is.
 */
export interface OwnRedis {
  readonly url: string;
  readonly port: number;
  pid(): number;
  /** SIGSTOP: the TCP connection stays open, nothing is answered. */
  freeze(): void;
  /** SIGCONT. */
  thaw(): void;
  /** SIGKILL (no save) and wait until the process is gone. */
  kill(): Promise<void>;
  /** A fresh, empty server on the same port. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Whether `redis-server` is on PATH. Under CI its absence throws: a fault suite runs there, never skips. */
export function redisServerAvailable(): boolean {
  const available = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
  if (!available && process.env.CI)
    throw new Error('redis-server is not on PATH (scripts/engines.sh installs it)');
  return available;
}

function answers(port: number): boolean {
  return spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8', timeout: 1_000 })
    .stdout?.trim()
    .startsWith('PONG');
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'subx-own-redis-'));
  let child: ReturnType<typeof spawn> | null = null;

  const start = async (): Promise<void> => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    await waitFor(() => answers(port), {
      timeoutMs: 10_000,
      intervalMs: 50,
      message: `redis-server on ${port}`,
    });
  };
  const kill = async (): Promise<void> => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((resolve) => c.once('exit', resolve));
    c.kill('SIGCONT');
    c.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    pid: () => child?.pid ?? -1,
    freeze: () => void child?.kill('SIGSTOP'),
    thaw: () => void child?.kill('SIGCONT'),
    kill,
    start,
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
