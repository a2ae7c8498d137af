/**
 * Gateway configuration: one schema, parsed on demand (never at import time) with service-kit's
 * helpers, failing fast with every bad key in one ConfigError. Tests call loadConfig({...}). The
 * job service reads its own (services/jobs/src/config.ts).
 * Access-control variables (API_KEY_PEPPER, ADMIN_TOKEN, ACCESS_PRICING_JSON,
 * IP_RATE_LIMIT_PER_MINUTE, KEY_CACHE_TTL_MS) are read by access/config.ts.
 */
import { z } from 'zod';
import { CONSUMER_GROUPS, TOPICS } from '@subx/contracts';
import { DEFAULT_AUDIT_RETENTION_DAYS } from '@subx/contracts/audit';
import {
  csv,
  durationMs,
  grpcAddress,
  nameString,
  port,
  nonNegativeInt,
  positiveInt,
  serviceBasicsEnv,
  urlStringOf,
  redactConfig as redact,
  loadConfig as parse,
  secret,
  secretKeysOf,
  metricsPort,
  trustProxyEnv,
  grpcTlsEnv,
  kafkaSecurityEnv,
  kafkaTopicRetentionEnv,
  schemaRegistryEnv,
} from '@subx/service-kit';

export const ConfigSchema = z.object({
  /** gRPC over TLS (service-kit net/grpc-tls.ts): GRPC_TLS*, off unless set. */
  ...grpcTlsEnv,
  /** Kafka TLS and SASL (service-kit net/kafka-security-env.ts): KAFKA_SSL*, KAFKA_SASL_*. */
  ...kafkaSecurityEnv,
  /** retention.ms of the Kafka topics it creates (service-kit net/kafka-topic-retention-env.ts). */
  ...kafkaTopicRetentionEnv,
  /** The schema registry (service-kit net/schema-registry-env.ts): SCHEMA_REGISTRY_*, off unless set. */
  ...schemaRegistryEnv,
  PORT: port.default(8080),
  /** `/metrics` (Prometheus) on its own port; `off` disables it. */
  METRICS_PORT: metricsPort.default(9464),
  HOST: nameString.default('0.0.0.0'),
  /** LOG_LEVEL and SHUTDOWN_TIMEOUT_MS, read as by every service. */
  ...serviceBasicsEnv,
  EXTRACTOR_GRPC_ADDR: grpcAddress.default('127.0.0.1:50051'),
  COMMENTS_GRPC_ADDR: grpcAddress.default('127.0.0.1:50052'),
  AI_GRPC_ADDR: grpcAddress.default('127.0.0.1:50053'),
  BILLING_GRPC_ADDR: grpcAddress.default('127.0.0.1:50054'),
  /** Deadline of a single gRPC call (extract, validate, comments, playlist listing). */
  GRPC_DEADLINE_MS: durationMs.default(30_000),
  /** Summaries and analyses call a model: a longer deadline. */
  AI_GRPC_DEADLINE_MS: durationMs.default(90_000),
  /** Each gRPC health check behind /health. */
  HEALTH_CHECK_TIMEOUT_MS: durationMs.default(1_000),
  REDIS_URL: secret(urlStringOf(['redis:', 'rediss:'])).optional(),
  MONGO_URL: secret(urlStringOf(['mongodb:', 'mongodb+srv:'])).optional(),
  MONGO_DB: nameString.default('subx'),
  KAFKA_BROKERS: csv.optional(),
  KAFKA_CLIENT_ID: nameString.default('gateway'),
  BODY_LIMIT_BYTES: positiveInt.default(65_536),
  /**
   * A request whose headers and body have not fully arrived by then is answered 408 and its socket
   * closed (fastify `requestTimeout`): a client that stalls its body holds nothing for long.
   */
  REQUEST_RECEIVE_TIMEOUT_MS: durationMs.default(10_000),
  /** A connection idle this long (no request in progress) is closed (keep-alive sockets). */
  CONNECTION_IDLE_TIMEOUT_MS: durationMs.default(30_000),
  /** docs/decisions.md "Deadlines of batch and playlist": batch 60 s in total, playlist 120 s in total. */
  BATCH_TIMEOUT_MS: durationMs.default(60_000),
  PLAYLIST_TIMEOUT_MS: durationMs.default(120_000),
  /** Floor of the per-video budget max(total / n, floor); the interface gives 10 s for playlists. */
  FANOUT_MIN_ITEM_TIMEOUT_MS: durationMs.default(10_000),
  /** Videos extracted at the same time per batch/playlist request. */
  FANOUT_CONCURRENCY: positiveInt.default(10),
  /** Bound on each event-bus step of a batch/playlist request (join, worker check, publish). */
  FANOUT_BUS_TIMEOUT_MS: durationMs.default(5_000),
  /** The extractor workers' consumer group (the extractor reads the same variable). */
  EXTRACT_WORKERS_GROUP: nameString.default(CONSUMER_GROUPS.extractWorkers.default),
  /** Topics of batch/playlist jobs and their results (the extractor reads the same variables, docs/events.md). */
  EXTRACT_JOBS_TOPIC: nameString.default(TOPICS.extractJobs.default),
  EXTRACT_RESULTS_TOPIC: nameString.default(TOPICS.extractResults.default),
  /**
   * The micro-cache of recent extract answers (src/domain/extract-cache.ts): how long an answer is served
   * from this process without asking the extractor, and the memory it may hold. 0 disables it.
   * The TTL bounds how stale a replica can be after another one's force_refresh.
   */
  EXTRACT_CACHE_TTL_MS: nonNegativeInt.default(30_000),
  EXTRACT_CACHE_MAX_BYTES: nonNegativeInt.default(64 * 1024 * 1024),
  /**
   * The longest audio extract transcribes while the client waits (`mode` auto or transcribe):
   * longer videos answer 422 AUDIO_TOO_LONG pointing to bulk jobs, which transcribe up to the
   * extractor's TRANSCRIBE_MAX_SECONDS.
   */
  TRANSCRIBE_SYNC_MAX_SECONDS: z.coerce.number().int().min(1).max(86_400).default(900),
  /**
   * The deadline of an extract that may start model work (`mode` auto or transcribe, or
   * `translate`), instead of GRPC_DEADLINE_MS: long enough for the model to finish audio up to
   * TRANSCRIBE_SYNC_MAX_SECONDS. The extractor starts no model work with less than its
   * TRANSCRIBE_TIMEOUT_MS of this left (422 AUDIO_TOO_LONG, pointing to jobs), and stops work
   * whose callers all left.
   */
  TRANSCRIBE_SYNC_DEADLINE_MS: durationMs.default(180_000),
  /**
   * Whose X-Forwarded-For gives the client IP (per-IP limits): false, a hop count, or the proxies'
   * IPs/CIDRs (service-kit net/trust-proxy.ts).
   */
  TRUST_PROXY: trustProxyEnv.default(false),
  /**
   * The admin API (/admin/v1) listens here only, never on PORT; loopback by default, so only this
   * machine (or pod) reaches it unless ADMIN_HOST says otherwise.
   */
  ADMIN_PORT: port.default(8081),
  ADMIN_HOST: nameString.default('127.0.0.1'),
  /**
   * The job service (services/jobs): bulk jobs, watches and webhook secrets are forwarded there.
   * Every call is bounded by JOB_SERVICE_DEADLINE_MS (a watch's run lists the platform first);
   * a chunks download by ten times that.
   */
  JOBS_GRPC_ADDR: grpcAddress.default('127.0.0.1:50055'),
  JOB_SERVICE_DEADLINE_MS: durationMs.default(90_000),
  /** POST /api/v1/jobs only: 10,000 URLs do not fit the 64 KB of every other route. */
  JOBS_BODY_LIMIT_BYTES: positiveInt.default(1_048_576),
  /**
   * The accounts' audit log (src/audit): events older than this many days are deleted by its
   * sweep (GET /api/v1/audit, docs/api.md "Audit log"), and the topic its events are published on.
   */
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3_650).default(DEFAULT_AUDIT_RETENTION_DAYS),
  AUDIT_EVENTS_TOPIC: nameString.default(TOPICS.auditEvents.default),
  /** Where a workspace's deletion is announced (src/deletion/; billing reads the same variable). */
  ACCOUNT_EVENTS_TOPIC: nameString.default(TOPICS.accountEvents.default),
});

export type Config = z.output<typeof ConfigSchema>;

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  return parse(ConfigSchema, env);
}

/** The config with secrets replaced, for the startup log. */
export function redactConfig(config: Config): Record<string, unknown> {
  return redact(config, secretKeysOf(ConfigSchema));
}
