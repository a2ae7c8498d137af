/**
 * The speech engine the transcription suites run against: TRANSCRIBE_BASE_URL when set (the
 * engines script's), else scripts/stt-server installed and started here on a free port.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const given = process.env.TRANSCRIBE_BASE_URL;
const install = given
  ? undefined
  : spawnSync('bash', [join(root, 'scripts/stt-server/install.sh')], { encoding: 'utf8', timeout: 300_000 });
const python = install?.status === 0 ? install.stdout.trim() : '';

/** Whether an engine can run: given, or installed. */
export const ready = Boolean(given) || python !== '';

/** The engine's OpenAI-compatible base URL, and the process when it was started here. */
export async function startEngine(): Promise<{ url: string; child?: ChildProcess }> {
  if (given) return { url: given };
  const child = spawn(python, [join(root, 'scripts/stt-server/server.py'), '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('the speech engine did not start within 30 s')), 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(`${m[1]}/v1`);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the speech engine exited with ${code}`));
    });
  });
  return { url, child };
}
