/**
 * The job service's configuration: one schema, parsed on demand with service-kit's helpers,
 * failing fast with every bad key in one ConfigError. The jobs', watches' and webhooks' variables
 * are their rooms' own fragments; the pricing table, the pepper and the reservation lifetime are
 * read under the same names as the gateway reads them, since both charge the same accounts.
 */
import { z } from 'zod';
import { TOPICS } from '@subx/contracts';
import { DEFAULT_RESERVATION_TTL_MS, PricingOverrideSchema } from '@subx/credits';
import {
  csv,
  durationMs,
  grpcAddress,
  grpcHost,
  grpcTlsEnv,
  jsonOf,
  kafkaSecurityEnv,
  kafkaTopicRetentionEnv,
  loadConfig as parse,
  metricsPort,
  nameString,
  port,
  positiveInt,
  redactConfig as redact,
  schemaRegistryEnv,
  secret,
  secretKeysOf,
  serviceBasicsEnv,
  urlStringOf,
} from '@subx/service-kit';
import { jobsEnv } from './jobs/config.ts';
import { watchesEnv } from './watches/config.ts';
import { webhookEnv } from './webhooks/config.ts';

const MIN_PEPPER_LENGTH = 32;

export function configSchema(options: { embedded: boolean } = { embedded: false }) {
  const pepper = secret(
    z.string().min(MIN_PEPPER_LENGTH, { error: `must be at least ${MIN_PEPPER_LENGTH} characters` }),
  );
  return z.object({
    /** gRPC over TLS (service-kit net/grpc-tls.ts): GRPC_TLS*, off unless set. */
    ...grpcTlsEnv,
    /** Kafka TLS and SASL (service-kit net/kafka-security-env.ts): KAFKA_SSL*, KAFKA_SASL_*. */
    ...kafkaSecurityEnv,
    /** retention.ms of the Kafka topics it creates (service-kit net/kafka-topic-retention-env.ts). */
    ...kafkaTopicRetentionEnv,
    /** The schema registry (service-kit net/schema-registry-env.ts): SCHEMA_REGISTRY_*, off unless set. */
    ...schemaRegistryEnv,
    GRPC_PORT: port.default(50055),
    /** gRPC bind address (default 0.0.0.0). */
    GRPC_HOST: grpcHost,
    /** `/metrics` (Prometheus) on its own port; `off` disables it. */
    METRICS_PORT: metricsPort.default(9470),
    /** LOG_LEVEL and SHUTDOWN_TIMEOUT_MS, read as by every service. */
    ...serviceBasicsEnv,
    /** The extractor: source listings, durations for a dry run, and the bulk items without a bus. */
    EXTRACTOR_GRPC_ADDR: grpcAddress.default('127.0.0.1:50051'),
    GRPC_DEADLINE_MS: durationMs.default(30_000),
    HEALTH_CHECK_TIMEOUT_MS: durationMs.default(1_000),
    REDIS_URL: secret(urlStringOf(['redis:', 'rediss:'])).optional(),
    MONGO_URL: secret(urlStringOf(['mongodb:', 'mongodb+srv:'])).optional(),
    MONGO_DB: nameString.default('subx'),
    KAFKA_BROKERS: csv.optional(),
    KAFKA_CLIENT_ID: nameString.default('jobs'),
    /** Bulk items extracted at once over gRPC when no bus is shared with workers (a process alone). */
    FANOUT_CONCURRENCY: positiveInt.default(10),
    /** Bound on each event-bus step of the bulk fan-out (join, worker check, publish). */
    FANOUT_BUS_TIMEOUT_MS: durationMs.default(5_000),
    /** Where the extractor workers answer (the gateway's batch calls read the same topic). */
    EXTRACT_RESULTS_TOPIC: nameString.default(TOPICS.extractResults.default),
    /** Bulk jobs (src/jobs/README.md): JOBS_*, JOB_*, the bulk topic and the lifecycle topic. */
    ...jobsEnv,
    /** Watches (src/watches/README.md): WATCHES_POLL_MS, WATCH_*. */
    ...watchesEnv,
    /** Job webhooks (src/webhooks/): WEBHOOK_ALLOW_PRIVATE_NETWORKS, _TIMEOUT_MS, _POLL_MS, _CONCURRENCY. */
    ...webhookEnv,
    /**
     * The key the webhook secrets are sealed under is derived from it (HKDF): the gateway's
     * API_KEY_PEPPER, the same value. Generated in `npm start` (one process shares it).
     */
    API_KEY_PEPPER: options.embedded ? pepper.optional() : pepper,
    API_KEY_PEPPER_PREVIOUS: pepper.optional(),
    /** The price table over the defaults, as the gateway reads it (docs/api.md, "Credits"). */
    ACCESS_PRICING_JSON: jsonOf(PricingOverrideSchema).optional(),
    /**
     * How long a credit hold may stay open before recovery returns it (the gateway recovers
     * them): a job round must end well within it, so a live round's hold is never refunded.
     */
    CREDIT_RESERVATION_TTL_MS: durationMs.default(DEFAULT_RESERVATION_TTL_MS),
    CREDIT_USAGE_TOPIC: nameString.default(TOPICS.creditUsage.default),
    /** Where the scheduled watch runs counted against the daily limit are reported. */
    REQUEST_USAGE_TOPIC: nameString.default(TOPICS.requestUsage.default),
  });
}

export const ConfigSchema = configSchema();
export type JobServiceConfig = z.output<typeof ConfigSchema>;

export function loadJobServiceConfig(
  env: Record<string, string | undefined> = process.env,
  options: { embedded: boolean } = { embedded: false },
): JobServiceConfig {
  return parse(configSchema(options), env);
}

/** The config with secrets replaced, for the startup log. */
export function redactConfig(config: JobServiceConfig): Record<string, unknown> {
  return redact(config, secretKeysOf(ConfigSchema));
}
