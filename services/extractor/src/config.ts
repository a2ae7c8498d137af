import {
  csv,
  durationMs,
  loadConfig,
  port,
  secret,
  urlStringOf,
  grpcHost,
  metricsPort,
  grpcTlsEnv,
  kafkaSecurityEnv,
} from '@subx/service-kit';
import { z } from 'zod';
import { DEFAULT_EXTRACT_WORKER_CONCURRENCY } from './jobs/extract-worker.ts';

/**
 * Environment of the extractor service. The YouTube client reads its own YOUTUBE_* variables
 * (packages/youtube, `loadYouTubeConfig`).
 */
export const ConfigSchema = z.object({
  /** gRPC over TLS (service-kit net/grpc-tls.ts): GRPC_TLS*, off unless set. */
  ...grpcTlsEnv,
  /** Kafka TLS and SASL (service-kit net/kafka-security-env.ts): KAFKA_SSL*, KAFKA_SASL_*. */
  ...kafkaSecurityEnv,
  GRPC_PORT: port.default(50051),
  /** `/metrics` (Prometheus) on its own port; `off` disables it. */
  METRICS_PORT: metricsPort.default(9465),
  /** gRPC bind address (default 0.0.0.0). */
  GRPC_HOST: grpcHost,
  /** Unset: an in-process cache (single replica only). */
  REDIS_URL: secret(urlStringOf(['redis:', 'rediss:'])).optional(),
  /** Unset: no Kafka workers (batch/playlist jobs then need the in-process bus of `npm start`). */
  KAFKA_BROKERS: csv.optional(),
  KAFKA_CLIENT_ID: z.string().trim().min(1).default('extractor'),
  /** Consumer group of the extraction workers. */
  KAFKA_GROUP_ID: z.string().trim().min(1).default('extractor-workers'),
  /** Topic of extraction jobs, and of results of jobs naming no reply topic (docs/events.md). */
  EXTRACT_JOBS_TOPIC: z.string().trim().min(1).default('extract.jobs.v1'),
  EXTRACT_RESULTS_TOPIC: z.string().trim().min(1).default('extract.results.v1'),
  /**
   * Further topics a job may name as its reply_topic (csv; e.g. per-gateway reply topics). Results
   * go to EXTRACT_RESULTS_TOPIC or one of these, never to another topic a job names.
   */
  EXTRACT_REPLY_TOPICS: csv.optional(),
  /** Run Kafka extraction workers in this process. */
  EXTRACT_WORKERS_ENABLED: z
    .enum(['true', 'false', '1', '0'])
    .default('true')
    .transform((v) => v === 'true' || v === '1'),
  /** Consumer-group members per process (docs/events.md). */
  EXTRACT_WORKER_MEMBERS: z.coerce.number().int().min(1).max(64).default(4),
  /** Jobs one member runs at once, several of one partition included (docs/events.md). */
  EXTRACT_WORKER_CONCURRENCY: z.coerce
    .number()
    .int()
    .min(1)
    .max(256)
    .default(DEFAULT_EXTRACT_WORKER_CONCURRENCY),
  TRANSCRIPT_CACHE_TTL_MS: durationMs.default(24 * 60 * 60 * 1000),
  VALIDATE_CACHE_TTL_MS: durationMs.default(60 * 60 * 1000),
  PLAYLIST_CACHE_TTL_MS: durationMs.default(10 * 60 * 1000),
  SHUTDOWN_TIMEOUT_MS: durationMs.default(10_000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type ExtractorConfig = z.output<typeof ConfigSchema>;

export function loadExtractorConfig(env: Record<string, string | undefined> = process.env): ExtractorConfig {
  return loadConfig(ConfigSchema, env);
}
