/** The demo's embeddings: the configured endpoint, the offline model once installed, else off. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { describeWithEmbeddingsModel } from '@subx/testing/embeddings-server';
import { startDemoEmbeddings } from './demo-embeddings.ts';

const cache = process.env.ENGINES_CACHE;
afterEach(() => {
  if (cache === undefined) delete process.env.ENGINES_CACHE;
  else process.env.ENGINES_CACHE = cache;
});

describe('the demo’s embeddings', () => {
  it('use EMBEDDINGS_BASE_URL when it is set, and say so', async () => {
    const env: NodeJS.ProcessEnv = { EMBEDDINGS_BASE_URL: 'http://127.0.0.1:9/v1' };
    const demo = await startDemoEmbeddings(env);
    expect(demo.line).toBe('  embeddings:   http://127.0.0.1:9/v1 (EMBEDDINGS_BASE_URL)');
    expect(env.EMBEDDINGS_BASE_URL).toBe('http://127.0.0.1:9/v1');
  });

  it('are off without the offline model, and the banner names the command that installs it', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'subx-engines-'));
    try {
      process.env.ENGINES_CACHE = empty;
      const env: NodeJS.ProcessEnv = {};
      const demo = await startDemoEmbeddings(env);
      expect(demo.line).toContain(
        'off (bash scripts/embeddings-server/install.sh installs the offline model',
      );
      expect(env.EMBEDDINGS_BASE_URL).toBeUndefined();
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describeWithEmbeddingsModel('the demo’s offline embeddings model', () => {
  it('is started and named once installed: EMBEDDINGS_BASE_URL points at it', async () => {
    const configured = process.env.EMBEDDINGS_BASE_URL;
    const env = process.env;
    const demo = await startDemoEmbeddings(env);
    try {
      // an endpoint configured for the suite is used as it is; else the offline model is started
      if (configured) expect(demo.line).toContain(`${configured} (EMBEDDINGS_BASE_URL)`);
      else
        expect(demo.line).toMatch(/embeddings: {3}http:\/\/127\.0\.0\.1:\d+\/v1 \(multilingual-e5-small-q4/);
      const res = await fetch(`${env.EMBEDDINGS_BASE_URL}/models`);
      expect(res.ok).toBe(true);
    } finally {
      await demo.close();
      if (!configured) {
        delete env.EMBEDDINGS_BASE_URL;
        delete env.EMBEDDINGS_MODEL;
      }
    }
  }, 90_000);
});
