import {
  durationMs,
  loadConfig,
  serviceBasicsEnv,
  port,
  secret,
  urlStringOf,
  grpcHost,
  metricsPort,
  grpcTlsEnv,
} from '@subx/service-kit';
import { z } from 'zod';

/** Environment of the comments service (the YouTube client reads its own YOUTUBE_* variables). */
export const ConfigSchema = z.object({
  /** gRPC over TLS (service-kit net/grpc-tls.ts): GRPC_TLS*, off unless set. */
  ...grpcTlsEnv,
  GRPC_PORT: port.default(50052),
  /** `/metrics` (Prometheus) on its own port; `off` disables it. */
  METRICS_PORT: metricsPort.default(9466),
  /** gRPC bind address (default 0.0.0.0). */
  GRPC_HOST: grpcHost,
  /** Unset: an in-process cache (single replica only). */
  REDIS_URL: secret(urlStringOf(['redis:', 'rediss:'])).optional(),
  COMMENTS_CACHE_TTL_MS: durationMs.default(60 * 60 * 1000),
  /** LOG_LEVEL and SHUTDOWN_TIMEOUT_MS, read as by every service. */
  ...serviceBasicsEnv,
});

export type CommentsConfig = z.output<typeof ConfigSchema>;

export function loadCommentsConfig(env: Record<string, string | undefined> = process.env): CommentsConfig {
  return loadConfig(ConfigSchema, env);
}
