/**
 * Gateway configuration: one schema, parsed on demand (never at import time), failing fast with
 * every bad key in one message. Tests call loadConfig({...}) directly.
 */
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65_535);
const positiveInt = z.coerce.number().int().positive();
const csv = z
  .string()
  .default('')
  .transform((value) =>
    value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
// Only "true"/"1" are true: `Boolean("false")` would be.
const boolEnv = z
  .enum(['true', 'false', '1', '0', ''])
  .default('false')
  .transform((v) => v === 'true' || v === '1');
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === '' ? undefined : v));

export const ConfigSchema = z.object({
  PORT: port.default(8080),
  HOST: z.string().default('0.0.0.0'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  EXTRACTOR_GRPC_ADDR: z.string().default('127.0.0.1:50051'),
  COMMENTS_GRPC_ADDR: z.string().default('127.0.0.1:50052'),
  AI_GRPC_ADDR: z.string().default('127.0.0.1:50053'),
  BILLING_GRPC_ADDR: z.string().default('127.0.0.1:50054'),
  /** Deadline of a single gRPC call (extract, validate, comments). */
  GRPC_DEADLINE_MS: positiveInt.default(30_000),
  /** Summaries and analyses call a model: a longer deadline. */
  AI_GRPC_DEADLINE_MS: positiveInt.default(90_000),
  /** gRPC health checks behind /health. */
  HEALTH_CHECK_TIMEOUT_MS: positiveInt.default(1_000),
  ADMIN_TOKEN: optionalString,
  API_KEY_PEPPER: optionalString,
  REDIS_URL: optionalString,
  MONGO_URL: optionalString,
  MONGO_DB: z.string().default('subx'),
  KAFKA_BROKERS: csv,
  BODY_LIMIT_BYTES: positiveInt.default(65_536),
  /** Interface §8: batch 60 s in total, playlist 120 s in total. */
  BATCH_TIMEOUT_MS: positiveInt.default(60_000),
  PLAYLIST_TIMEOUT_MS: positiveInt.default(120_000),
  /** Floor of the per-video budget: max(total / n, this). Interface §8 gives 10 s for playlists. */
  FANOUT_MIN_ITEM_TIMEOUT_MS: positiveInt.default(10_000),
  /** Videos extracted at the same time per batch/playlist request. */
  FANOUT_CONCURRENCY: positiveInt.default(10),
  IP_RATE_LIMIT_PER_MIN: positiveInt.default(60),
  /** Honour X-Forwarded-For (only behind a trusted proxy). */
  TRUST_PROXY: boolEnv,
  SHUTDOWN_TIMEOUT_MS: positiveInt.default(10_000),
});

export type Config = z.infer<typeof ConfigSchema>;

/** Keys never logged. */
export const SECRET_KEYS = ['ADMIN_TOKEN', 'API_KEY_PEPPER', 'REDIS_URL', 'MONGO_URL'] as const;

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const result = ConfigSchema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new Error(`Invalid gateway configuration: ${problems.join('; ')}`);
  }
  return result.data;
}

/** The config with secrets (and URLs that may embed credentials) replaced, for the startup log. */
export function redactConfig(config: Config): Record<string, unknown> {
  const out: Record<string, unknown> = { ...config };
  for (const key of SECRET_KEYS) if (out[key] !== undefined) out[key] = '[redacted]';
  return out;
}
