/**
 * Texts to vectors through any OpenAI-compatible `POST /v1/embeddings`, by the `openai` package:
 * batched (EMBEDDINGS_BATCH_SIZE texts a call), a bounded number of calls in flight, answers put
 * back in input order by their `index` (servers may answer out of order), and a cache keyed by the
 * model and the text's SHA-256, so a text embedded once is never paid for again.
 */
import { createHash } from 'node:crypto';
import OpenAI from 'openai';
import { AppError, Errors } from '@subx/errors';
import type { EmbeddingsConfig } from './config.ts';

/** Where vectors are kept between calls (the gateway passes its key-value store). */
export interface EmbeddingCache {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, options: { ttlMs: number }): Promise<unknown>;
}

export interface Embedder {
  readonly model: string;
  /** One vector per text, in order. */
  embed(texts: readonly string[]): Promise<number[][]>;
}

export interface EmbedderOptions {
  cache?: EmbeddingCache;
  /** How long a vector is kept (default 7 days). */
  cacheTtlMs?: number;
  /** Texts one call of embed() may ask for (default 10000): the bound on one request's work. */
  maxTexts?: number;
}

const DEFAULT_TTL_MS = 7 * 24 * 3600_000;

export function createEmbedder(config: EmbeddingsConfig, options: EmbedderOptions = {}): Embedder {
  const client = new OpenAI({
    apiKey: config.apiKey ?? 'none',
    baseURL: config.baseUrl,
    timeout: config.timeoutMs,
    maxRetries: 1,
  });
  const ttlMs = options.cacheTtlMs ?? DEFAULT_TTL_MS;
  const maxTexts = options.maxTexts ?? 10_000;
  const keyOf = (text: string) =>
    `embedding:${config.model}:${createHash('sha256').update(text, 'utf8').digest('base64url')}`;

  let inFlight = 0;
  const waiting: (() => void)[] = [];
  async function slot<T>(work: () => Promise<T>): Promise<T> {
    while (inFlight >= config.concurrency) await new Promise<void>((resolve) => waiting.push(resolve));
    inFlight++;
    try {
      return await work();
    } finally {
      inFlight--;
      waiting.shift()?.();
    }
  }

  async function call(batch: readonly string[]): Promise<number[][]> {
    let answer: Awaited<ReturnType<typeof client.embeddings.create>>;
    try {
      answer = await slot(() =>
        client.embeddings.create({ model: config.model, input: [...batch], encoding_format: 'float' }),
      );
    } catch (err) {
      throw Errors.serviceUnavailable('embeddings', err);
    }
    const vectors: (number[] | undefined)[] = new Array(batch.length);
    for (const item of answer.data ?? []) {
      if (Number.isInteger(item.index) && item.index >= 0 && item.index < batch.length)
        vectors[item.index] = item.embedding as number[];
    }
    if (vectors.some((v) => !Array.isArray(v) || v.length === 0 || v.some((x) => !Number.isFinite(x)))) {
      throw Errors.serviceUnavailable(
        'embeddings',
        new Error(`the endpoint answered ${answer.data?.length ?? 0} vectors for ${batch.length} texts`),
      );
    }
    return vectors as number[][];
  }

  return {
    model: config.model,
    async embed(texts) {
      if (texts.length > maxTexts) {
        throw Errors.invalidRequest(`At most ${maxTexts} texts can be embedded in one request.`);
      }
      const out: (number[] | undefined)[] = new Array(texts.length);
      const cache = options.cache;
      if (cache) {
        const hits = await Promise.all(texts.map((t) => cache.get(keyOf(t))));
        hits.forEach((hit, i) => {
          if (hit) out[i] = JSON.parse(hit) as number[];
        });
      }
      // One call per distinct missing text: a text repeated in one request is paid for once.
      const missing = [...new Set(texts.filter((_, i) => out[i] === undefined))];
      const batches: string[][] = [];
      for (let i = 0; i < missing.length; i += config.batchSize)
        batches.push(missing.slice(i, i + config.batchSize));
      const fresh = new Map<string, number[]>();
      await Promise.all(
        batches.map(async (batch) => {
          const vectors = await call(batch);
          batch.forEach((text, i) => fresh.set(text, vectors[i]!));
        }),
      );
      if (cache && fresh.size > 0) {
        await Promise.all(
          [...fresh].map(([text, vector]) => cache.set(keyOf(text), JSON.stringify(vector), { ttlMs })),
        );
      }
      return texts.map((t, i) => out[i] ?? fresh.get(t)!);
    },
  };
}

/** The answer when embeddings are asked for and no endpoint is configured. */
export function embeddingsNotConfigured(): AppError {
  return new AppError(
    'EMBEDDINGS_NOT_CONFIGURED',
    '`embed: true` needs an embeddings endpoint, and this deployment has none (EMBEDDINGS_BASE_URL). Ask without `embed`.',
  );
}
