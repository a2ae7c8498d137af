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

/** Environment of the billing service. */
export const ConfigSchema = z.object({
  /** gRPC over TLS (service-kit net/grpc-tls.ts): GRPC_TLS*, off unless set. */
  ...grpcTlsEnv,
  /** Kafka TLS and SASL (service-kit net/kafka-security-env.ts): KAFKA_SSL*, KAFKA_SASL_*. */
  ...kafkaSecurityEnv,
  GRPC_PORT: port.default(50054),
  /** `/metrics` (Prometheus) on its own port; `off` disables it. */
  METRICS_PORT: metricsPort.default(9468),
  /** gRPC bind address (default 0.0.0.0). */
  GRPC_HOST: grpcHost,
  /** Unset: the in-process bus (only meaningful inside `npm start`). */
  KAFKA_BROKERS: csv.optional(),
  KAFKA_CLIENT_ID: z.string().trim().min(1).default('billing'),
  KAFKA_GROUP_ID: z.string().trim().min(1).default('billing-ledger'),
  CREDIT_USAGE_TOPIC: z.string().trim().min(1).default('billing.credit-usage.v1'),
  REQUEST_USAGE_TOPIC: z.string().trim().min(1).default('billing.request-usage.v1'),
  /** Consumer group of the request-usage topic; unset: `<KAFKA_GROUP_ID>-requests`. */
  KAFKA_REQUESTS_GROUP_ID: z.string().trim().min(1).optional(),
  /** Unset: the in-memory store (only meaningful inside `npm start`). */
  MONGO_URL: secret(urlStringOf(['mongodb:', 'mongodb+srv:'])).optional(),
  MONGO_DB: z.string().trim().min(1).default('subx'),
  SHUTDOWN_TIMEOUT_MS: durationMs.default(10_000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type BillingConfig = z.output<typeof ConfigSchema>;

export function loadBillingConfig(env: Record<string, string | undefined> = process.env): BillingConfig {
  return loadConfig(ConfigSchema, env);
}
