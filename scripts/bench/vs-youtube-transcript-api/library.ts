/**
 * youtube-transcript-api, the most used open-source library for the job, in a virtual environment
 * under ~/.cache/subx-bench (installed from PyPI the first time), and its driver (driver.py beside
 * this file) that sends the library's https://www.youtube.com requests to a fake platform.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/** The version compared against, pinned so that runs stay comparable. */
const LIBRARY_VERSION = '1.2.5';
const venv = join(homedir(), '.cache', 'subx-bench', 'venv');
export const python = join(venv, 'bin', 'python');
export const driver = join(fileURLToPath(new URL('.', import.meta.url)), 'driver.py');
const run = promisify(execFile);

/** Installs the library when missing; resolves with the installed version. */
export async function ensureLibrary(): Promise<string> {
  if (!existsSync(python)) await run('python3', ['-m', 'venv', venv]);
  await run(
    python,
    [
      '-m',
      'pip',
      'install',
      '-q',
      '--disable-pip-version-check',
      `youtube-transcript-api==${LIBRARY_VERSION}`,
    ],
    { timeout: 300_000 },
  );
  const { stdout } = await run(python, [
    '-c',
    'import importlib.metadata as m; print(m.version("youtube-transcript-api"))',
  ]);
  return stdout.trim();
}
