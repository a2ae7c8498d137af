/**
 * EMBEDDINGS_BASE_URL   any OpenAI-compatible `/v1/embeddings` (OpenAI, a self-hosted server); unset:
 *                       no embeddings, and a request for them is EMBEDDINGS_NOT_CONFIGURED
 * EMBEDDINGS_API_KEY    its key (optional: self-hosted servers often take none)
 * EMBEDDINGS_MODEL      the model name sent (default text-embedding-3-small)
 * EMBEDDINGS_TIMEOUT_MS one call's bound (default 30000)
 * EMBEDDINGS_BATCH_SIZE texts per call (default 64, at most 2048: OpenAI's per-call limit)
 * EMBEDDINGS_CONCURRENCY calls in flight per process (default 2)
 */
import { z } from 'zod';

export interface EmbeddingsConfig {
  baseUrl: string;
  apiKey: string | undefined;
  model: string;
  timeoutMs: number;
  batchSize: number;
  concurrency: number;
}

const positive = (fallback: number, max: number) => z.coerce.number().int().min(1).max(max).default(fallback);

const schema = z.object({
  EMBEDDINGS_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  EMBEDDINGS_API_KEY: z.string().min(1).optional(),
  EMBEDDINGS_MODEL: z.string().min(1).default('text-embedding-3-small'),
  EMBEDDINGS_TIMEOUT_MS: positive(30_000, 600_000),
  EMBEDDINGS_BATCH_SIZE: positive(64, 2048),
  EMBEDDINGS_CONCURRENCY: positive(2, 64),
});

/** The embeddings endpoint, or undefined when none is configured. Throws on a malformed value. */
export function loadEmbeddingsConfig(env: NodeJS.ProcessEnv): EmbeddingsConfig | undefined {
  const parsed = schema.safeParse(
    Object.fromEntries(Object.entries(env).filter(([k, v]) => k.startsWith('EMBEDDINGS_') && v !== '')),
  );
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${String(issue?.path[0] ?? 'EMBEDDINGS_*')}: ${issue?.message ?? 'invalid'}`);
  }
  const c = parsed.data;
  if (!c.EMBEDDINGS_BASE_URL) return undefined;
  return {
    baseUrl: c.EMBEDDINGS_BASE_URL.replace(/\/+$/, ''),
    apiKey: c.EMBEDDINGS_API_KEY,
    model: c.EMBEDDINGS_MODEL,
    timeoutMs: c.EMBEDDINGS_TIMEOUT_MS,
    batchSize: c.EMBEDDINGS_BATCH_SIZE,
    concurrency: c.EMBEDDINGS_CONCURRENCY,
  };
}
