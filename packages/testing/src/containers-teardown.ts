/**
 * Vitest global setup: no engine container outlives the test run, however its workers end. Every
 * worker's containers carry the run's label (RUN_ENV, set here before the workers start); a worker
 * removes its own when it exits or is stopped by a signal (engine-containers.ts), and this teardown
 * removes whatever is left with the run's label: a worker killed outright, or one that never got to
 * its exit. Without a Docker engine there is nothing to do.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { RUN_ENV, RUN_LABEL } from './engine-containers.ts';

function dockerReachable(): boolean {
  return Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock');
}

/** Removes every container labelled with this run; the ids it removed. */
export function removeRunContainers(run: string): string[] {
  let ids: string[];
  try {
    ids = execFileSync('docker', ['ps', '-aq', '--filter', `label=${RUN_LABEL}=${run}`], {
      encoding: 'utf8',
      timeout: 15_000,
    })
      .split('\n')
      .map((id) => id.trim())
      .filter(Boolean);
  } catch {
    return [];
  }
  if (ids.length === 0) return [];
  try {
    execFileSync('docker', ['rm', '-f', '-v', ...ids], { stdio: 'ignore', timeout: 30_000 });
  } catch {
    // gone already, or the engine went away with them
  }
  return ids;
}

export default function setup(): () => void {
  const run = (process.env[RUN_ENV] ||= randomUUID());
  return () => {
    if (dockerReachable()) removeRunContainers(run);
  };
}
