import {
  durationMs,
  httpUrl,
  grpcHost,
  loadConfig,
  grpcAddress,
  serviceBasicsEnv,
  nameString,
  nonNegativeInt,
  port,
  positiveInt,
  secret,
  urlStringOf,
  metricsPort,
  grpcTlsEnv,
} from '@subx/service-kit';
import { z } from 'zod';

/**
 * Environment of the AI service. Without OPENAI_API_KEY the service runs the local engine
 * (extractive summaries, lexicon analysis) and never calls a model.
 */
export const ConfigSchema = z.object({
  /** gRPC over TLS (service-kit net/grpc-tls.ts): GRPC_TLS*, off unless set. */
  ...grpcTlsEnv,
  GRPC_PORT: port.default(50053),
  /** `/metrics` (Prometheus) on its own port; `off` disables it. */
  METRICS_PORT: metricsPort.default(9467),
  /** gRPC bind address (default 0.0.0.0). */
  GRPC_HOST: grpcHost,
  /** Any OpenAI-compatible endpoint, including /v1 (e.g. http://localhost:11434/v1 for Ollama). */
  OPENAI_BASE_URL: httpUrl.optional(),
  OPENAI_API_KEY: secret().optional(),
  AI_MODEL: nameString.default('gpt-4o-mini'),
  /** Per HTTP attempt to the model. */
  AI_TIMEOUT_MS: durationMs.default(60_000),
  AI_MAX_RETRIES: nonNegativeInt.default(2),
  /** Token budget of one transcript chunk (and of the notes of the reduce step). */
  AI_CHUNK_TOKENS: positiveInt.default(12_000),
  EXTRACTOR_GRPC_ADDR: grpcAddress.default('127.0.0.1:50051'),
  COMMENTS_GRPC_ADDR: grpcAddress.default('127.0.0.1:50052'),
  /** Unset: an in-process cache (single replica only). */
  REDIS_URL: secret(urlStringOf(['redis:', 'rediss:'])).optional(),
  SUMMARY_CACHE_TTL_MS: durationMs.default(24 * 60 * 60 * 1000),
  ANALYSIS_CACHE_TTL_MS: durationMs.default(24 * 60 * 60 * 1000),
  /** Deadline of calls to the extractor and comments services. */
  GRPC_DEFAULT_DEADLINE_MS: durationMs.default(30_000),
  /** LOG_LEVEL and SHUTDOWN_TIMEOUT_MS, read as by every service. */
  ...serviceBasicsEnv,
});

export type AiConfig = z.output<typeof ConfigSchema>;

export function loadAiConfig(env: Record<string, string | undefined> = process.env): AiConfig {
  return loadConfig(ConfigSchema, env);
}
