import {
  csv,
  loadConfig,
  serviceBasicsEnv,
  nameString,
  port,
  secret,
  urlStringOf,
  grpcHost,
  metricsPort,
  grpcTlsEnv,
  kafkaSecurityEnv,
  kafkaTopicRetentionEnv,
} from '@subx/service-kit';
import { CONSUMER_GROUPS, TOPICS } from '@subx/contracts';
import { z } from 'zod';

/** Environment of the billing service. */
export const ConfigSchema = z.object({
  /** gRPC over TLS (service-kit net/grpc-tls.ts): GRPC_TLS*, off unless set. */
  ...grpcTlsEnv,
  /** Kafka TLS and SASL (service-kit net/kafka-security-env.ts): KAFKA_SSL*, KAFKA_SASL_*. */
  ...kafkaSecurityEnv,
  /** retention.ms of the Kafka topics it creates (service-kit net/kafka-topic-retention-env.ts). */
  ...kafkaTopicRetentionEnv,
  GRPC_PORT: port.default(50054),
  /** `/metrics` (Prometheus) on its own port; `off` disables it. */
  METRICS_PORT: metricsPort.default(9468),
  /** gRPC bind address (default 0.0.0.0). */
  GRPC_HOST: grpcHost,
  /** Unset: the in-process bus (only meaningful inside `npm start`). */
  KAFKA_BROKERS: csv.optional(),
  KAFKA_CLIENT_ID: nameString.default('billing'),
  KAFKA_GROUP_ID: nameString.default(CONSUMER_GROUPS.billingLedger.default),
  /** The usage topics (@subx/contracts TOPICS): the gateway reads the same two variables. */
  CREDIT_USAGE_TOPIC: nameString.default(TOPICS.creditUsage.default),
  REQUEST_USAGE_TOPIC: nameString.default(TOPICS.requestUsage.default),
  /** Consumer group of the request-usage topic; unset: `<KAFKA_GROUP_ID>-requests`. */
  KAFKA_REQUESTS_GROUP_ID: nameString.optional(),
  /** Deleted workspaces (@subx/contracts TOPICS): the gateway publishes under the same variable. */
  ACCOUNT_EVENTS_TOPIC: nameString.default(TOPICS.accountEvents.default),
  /** Consumer group of the account events (the ledger's pseudonymisation). */
  KAFKA_ACCOUNT_DELETIONS_GROUP_ID: nameString.default(CONSUMER_GROUPS.billingAccountDeletions.default),
  /**
   * A CloudEvents HTTP ingest (OpenMeter's `POST /api/v1/events`) that receives every credit-usage
   * event, batched, at least once (src/metering/export.ts). Unset: no export. A secret (it may
   * carry credentials).
   */
  METERING_INGEST_URL: secret(urlStringOf(['http:', 'https:'])).optional(),
  /** Bearer token sent to the ingest (`Authorization: Bearer ...`); unset: none. */
  METERING_INGEST_TOKEN: secret().optional(),
  /** The export's own consumer group on the credit-usage topic. */
  METERING_GROUP_ID: nameString.default('billing-metering'),
  /** Unset: the in-memory store (only meaningful inside `npm start`). */
  MONGO_URL: secret(urlStringOf(['mongodb:', 'mongodb+srv:'])).optional(),
  MONGO_DB: nameString.default('subx'),
  /** LOG_LEVEL and SHUTDOWN_TIMEOUT_MS, read as by every service. */
  ...serviceBasicsEnv,
});

export type BillingConfig = z.output<typeof ConfigSchema>;

export function loadBillingConfig(env: Record<string, string | undefined> = process.env): BillingConfig {
  return loadConfig(ConfigSchema, env);
}
