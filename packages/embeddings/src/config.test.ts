import { describe, expect, it } from 'vitest';
import { loadEmbeddingsConfig } from './config.ts';

describe('loadEmbeddingsConfig', () => {
  it('is undefined without EMBEDDINGS_BASE_URL (an empty value counts as unset)', () => {
    expect(loadEmbeddingsConfig({})).toBeUndefined();
    expect(loadEmbeddingsConfig({ EMBEDDINGS_BASE_URL: '', EMBEDDINGS_MODEL: 'm' })).toBeUndefined();
  });

  it('reads the endpoint with its defaults', () => {
    expect(loadEmbeddingsConfig({ EMBEDDINGS_BASE_URL: 'http://127.0.0.1:9000/v1/' })).toEqual({
      baseUrl: 'http://127.0.0.1:9000/v1',
      apiKey: undefined,
      model: 'text-embedding-3-small',
      timeoutMs: 30_000,
      batchSize: 64,
      concurrency: 2,
    });
  });

  it('names the variable that is wrong', () => {
    expect(() => loadEmbeddingsConfig({ EMBEDDINGS_BASE_URL: 'ftp://x' })).toThrow(/EMBEDDINGS_BASE_URL/);
    expect(() =>
      loadEmbeddingsConfig({ EMBEDDINGS_BASE_URL: 'http://x/v1', EMBEDDINGS_BATCH_SIZE: '0' }),
    ).toThrow(/EMBEDDINGS_BATCH_SIZE/);
  });
});
