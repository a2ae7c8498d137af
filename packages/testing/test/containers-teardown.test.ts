/**
 * No engine container outlives a test run, however its worker ends: a worker stopped by a signal
 * removes its own, and the run's teardown removes those of a worker killed outright, by the run's
 * label. Docker is the `docker` command here: a stand-in on PATH that records what it is asked and
 * lists the run's containers, so the test runs on machines without a Docker engine.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import setup, { removeRunContainers } from '../src/containers-teardown.ts';
import { RUN_ENV } from '../src/engine-containers.ts';

const engineContainers = fileURLToPath(new URL('../src/engine-containers.ts', import.meta.url));
let dir = '';
let env: NodeJS.ProcessEnv = {};

/** What the stand-in docker was asked, one call a line. */
const calls = () =>
  readFileSync(join(dir, 'calls'), { encoding: 'utf8', flag: 'a+' }).split('\n').filter(Boolean);

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'subx-docker-'));
  // `ps` lists the containers of the run named in its label filter; everything is recorded.
  writeFileSync(
    join(dir, 'docker'),
    `#!/bin/sh\necho "$*" >> "${dir}/calls"\ncase "$1 $3 $4" in\n  "ps --filter label=org.subx.testing.run=run-1") printf 'c-left-1\\nc-left-2\\n' ;;\nesac\n`,
  );
  chmodSync(join(dir, 'docker'), 0o755);
  env = { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}` };
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A worker that started two containers, stopped by `signal` once it is ready. */
async function workerEndedBy(signal: NodeJS.Signals): Promise<NodeJS.Signals | null> {
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { removeOnExit } from ${JSON.stringify(engineContainers)};
       removeOnExit('c-worker-1'); removeOnExit('c-worker-2');
       console.log('ready'); setInterval(() => {}, 1000);`,
    ],
    { env, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  const ended = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_c, s) => resolve(s)));
  child.kill(signal);
  return ended;
}

describe('engine containers of a test run', () => {
  it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)(
    'a worker stopped by %s removes its containers, then ends by that signal',
    async (signal) => {
      expect(await workerEndedBy(signal)).toBe(signal);
      expect(calls()).toEqual(['rm -f -v c-worker-1 c-worker-2']);
    },
  );

  it('a worker killed outright leaves them to the run’s teardown, which removes them by the run’s label', async () => {
    expect(await workerEndedBy('SIGKILL')).toBe('SIGKILL');
    expect(calls()).toEqual([]);
    const before = { path: process.env.PATH, run: process.env[RUN_ENV], host: process.env.DOCKER_HOST };
    try {
      process.env.PATH = env.PATH;
      process.env[RUN_ENV] = 'run-1';
      process.env.DOCKER_HOST = 'unix:///stand-in.sock';
      const teardown = setup();
      teardown();
    } finally {
      process.env.PATH = before.path;
      if (before.run === undefined) delete process.env[RUN_ENV];
      else process.env[RUN_ENV] = before.run;
      if (before.host === undefined) delete process.env.DOCKER_HOST;
      else process.env.DOCKER_HOST = before.host;
    }
    expect(calls()).toEqual([
      'ps -aq --filter label=org.subx.testing.run=run-1',
      'rm -f -v c-left-1 c-left-2',
    ]);
  });

  it('removes nothing of another run', () => {
    const path = process.env.PATH;
    try {
      process.env.PATH = env.PATH;
      expect(removeRunContainers('run-2')).toEqual([]);
    } finally {
      process.env.PATH = path;
    }
    expect(calls()).toEqual(['ps -aq --filter label=org.subx.testing.run=run-2']);
  });
});
