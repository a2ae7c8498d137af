import {
  boolEnv,
  csv,
  intBetween,
  durationMs,
  durationMsBetween,
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
  schemaRegistryEnv,
  httpUrl,
} from '@subx/service-kit';
import { CONSUMER_GROUPS, TOPICS } from '@subx/contracts';
import { z } from 'zod';
import {
  DEFAULT_EXTRACT_BULK_WORKER_CONCURRENCY,
  DEFAULT_EXTRACT_WORKER_CONCURRENCY,
} from './jobs/extract-worker.ts';

/**
 * Environment of the extractor service. The YouTube client reads its own YOUTUBE_* variables
 * (packages/youtube, `loadYouTubeConfig`).
 */
export const ConfigSchema = z
  .object({
    /** gRPC over TLS (service-kit net/grpc-tls.ts): GRPC_TLS*, off unless set. */
    ...grpcTlsEnv,
    /** Kafka TLS and SASL (service-kit net/kafka-security-env.ts): KAFKA_SSL*, KAFKA_SASL_*. */
    ...kafkaSecurityEnv,
    /** retention.ms of the Kafka topics it creates (service-kit net/kafka-topic-retention-env.ts). */
    ...kafkaTopicRetentionEnv,
    /** The schema registry (service-kit net/schema-registry-env.ts): SCHEMA_REGISTRY_*, off unless set. */
    ...schemaRegistryEnv,
    GRPC_PORT: port.default(50051),
    /** `/metrics` (Prometheus) on its own port; `off` disables it. */
    METRICS_PORT: metricsPort.default(9465),
    /** gRPC bind address (default 0.0.0.0). */
    GRPC_HOST: grpcHost,
    /** Unset: an in-process cache (single replica only). */
    REDIS_URL: secret(urlStringOf(['redis:', 'rediss:'])).optional(),
    /** Unset: no Kafka workers (batch/playlist jobs then need the in-process bus of `npm start`). */
    KAFKA_BROKERS: csv.optional(),
    KAFKA_CLIENT_ID: nameString.default('extractor'),
    /**
     * Consumer group of the extraction workers; the gateway reads the same variable (it checks that
     * workers are there before publishing a job). Default `extractor-workers`.
     */
    EXTRACT_WORKERS_GROUP: nameString.optional(),
    /** The older name of EXTRACT_WORKERS_GROUP, still read (both set: they must agree). */
    KAFKA_GROUP_ID: nameString.optional(),
    /** Topic of extraction jobs, and of results of jobs naming no reply topic (docs/events.md). */
    EXTRACT_JOBS_TOPIC: nameString.default(TOPICS.extractJobs.default),
    EXTRACT_RESULTS_TOPIC: nameString.default(TOPICS.extractResults.default),
    /**
     * Further topics a job may name as its reply_topic (csv; e.g. per-gateway reply topics). Results
     * go to EXTRACT_RESULTS_TOPIC or one of these, never to another topic a job names.
     */
    EXTRACT_REPLY_TOPICS: csv.optional(),
    /** Run Kafka extraction workers in this process. */
    EXTRACT_WORKERS_ENABLED: boolEnv.default(true),
    /** Consumer-group members per process (docs/events.md). */
    EXTRACT_WORKER_MEMBERS: intBetween(1, 64).default(4),
    /** Jobs one member runs at once, several of one partition included (docs/events.md). */
    EXTRACT_WORKER_CONCURRENCY: intBetween(1, 256).default(DEFAULT_EXTRACT_WORKER_CONCURRENCY),
    /**
     * The bulk workers (on whenever EXTRACT_WORKERS_ENABLED is): the videos of bulk jobs on a topic
     * and in a consumer group of their own, with fewer jobs at once than the batch workers, so that
     * a job of thousands of videos cannot hold the slots that interactive batch and playlist
     * requests wait for (docs/events.md). Results go to EXTRACT_RESULTS_TOPIC as well.
     */
    EXTRACT_BULK_JOBS_TOPIC: nameString.default(TOPICS.extractBulkJobs.default),
    EXTRACT_BULK_WORKERS_GROUP: nameString.default(CONSUMER_GROUPS.extractBulkWorkers.default),
    EXTRACT_BULK_WORKER_MEMBERS: intBetween(1, 64).default(1),
    EXTRACT_BULK_WORKER_CONCURRENCY: intBetween(1, 256).default(DEFAULT_EXTRACT_BULK_WORKER_CONCURRENCY),
    TRANSCRIPT_CACHE_TTL_MS: durationMs.default(24 * 60 * 60 * 1000),
    VALIDATE_CACHE_TTL_MS: durationMs.default(60 * 60 * 1000),
    PLAYLIST_CACHE_TTL_MS: durationMs.default(10 * 60 * 1000),
    /** Search pages and search listings: short, results change by the minute (search/search-service.ts). */
    SEARCH_CACHE_TTL_MS: durationMs.default(5 * 60 * 1000),
    /**
     * The model endpoint that translates captions when the platform refuses (`translate: true`),
     * the same variables as the AI service's: without OPENAI_API_KEY there is no model translation.
     */
    OPENAI_BASE_URL: httpUrl.optional(),
    OPENAI_API_KEY: secret().optional(),
    AI_MODEL: nameString.default('gpt-4o-mini'),
    /** Per model request (each group of segments), retried up to twice on 429/5xx. */
    TRANSLATION_TIMEOUT_MS: durationMs.default(60_000),
    /**
     * Speech-to-text for videos without captions (`mode` auto or transcribe): any OpenAI-compatible
     * `/v1/audio/transcriptions`. Unset: such requests answer 422 TRANSCRIPTION_NOT_CONFIGURED.
     */
    TRANSCRIBE_BASE_URL: httpUrl.optional(),
    TRANSCRIBE_API_KEY: secret().optional(),
    TRANSCRIBE_MODEL: nameString.default('whisper-1'),
    /** Bound on one request to the model (one part of the audio, its whole answer). */
    TRANSCRIBE_TIMEOUT_MS: durationMs.default(120_000),
    /**
     * How long a request to the model is tried again while the endpoint refuses connections or
     * answers 503 (an engine scaled to zero, restarting or full); 0: fail at once (502).
     */
    TRANSCRIBE_UNAVAILABLE_WAIT_MS: durationMsBetween(0, 3_600_000).default(0),
    /** Transcriptions in flight per process; more wait their turn, accounts taking turns. */
    TRANSCRIBE_CONCURRENCY: intBetween(1, 64).default(2),
    /** Transcriptions waiting for a turn, in all: past it 503 SERVICE_UNAVAILABLE, retryable. */
    TRANSCRIBE_QUEUE_MAX: intBetween(0, 10_000).default(32),
    /** Transcriptions of one account waiting for a turn: past it 503 SERVICE_UNAVAILABLE, retryable. */
    TRANSCRIBE_QUEUE_PER_ACCOUNT: intBetween(1, 10_000).default(4),
    /**
     * How long a transcription the model failed on (no speech, an answer cut short, a timeout) is
     * remembered for the video: a repeat within it is answered the same without the model.
     */
    TRANSCRIBE_FAILURE_TTL_MS: durationMs.default(60 * 60 * 1000),
    /**
     * The deployment's ceiling: longer videos are refused (422 AUDIO_TOO_LONG) before any audio is
     * fetched. Each tier's own cap is the gateway's (pricing table `transcribeMaxSeconds`).
     */
    TRANSCRIBE_MAX_SECONDS: intBetween(1, 86_400).default(14_400),
    /** The endpoint's per-request limit (OpenAI's 25 MB): larger audio is split into parts by ffmpeg. */
    TRANSCRIBE_UPLOAD_MAX_BYTES: intBetween(65_536, 1_000_000_000).default(25_000_000),
    /** Cap on one video's audio download (spooled to disk, never held in memory). */
    TRANSCRIBE_MAX_AUDIO_BYTES: intBetween(65_536, 10_000_000_000).default(250_000_000),
    /** The ffmpeg that splits audio larger than TRANSCRIBE_UPLOAD_MAX_BYTES (absent: such audio is refused). */
    TRANSCRIBE_FFMPEG: nameString.default('ffmpeg'),
    /** Where a transcription's audio is spooled while it is uploaded (default: the OS temporary directory). */
    TRANSCRIBE_SPOOL_DIR: nameString.optional(),
    /** LOG_LEVEL and SHUTDOWN_TIMEOUT_MS, read as by every service. */
    ...serviceBasicsEnv,
  })
  .superRefine((config, ctx) => {
    // Two names for one group: differing values would leave the gateway waiting for workers
    // that consume under the other name.
    if (
      config.EXTRACT_WORKERS_GROUP &&
      config.KAFKA_GROUP_ID &&
      config.EXTRACT_WORKERS_GROUP !== config.KAFKA_GROUP_ID
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['KAFKA_GROUP_ID'],
        message: 'must equal EXTRACT_WORKERS_GROUP when both are set (set only EXTRACT_WORKERS_GROUP)',
      });
    }
    // One topic for both kinds of job would have every job extracted (and answered) twice, once per
    // group, and bulk jobs would again queue in front of batch ones; one group for both topics
    // would mix their members, offsets and lag, and the gateway's check that batch workers are
    // there would count bulk workers too.
    if (
      config.EXTRACT_BULK_JOBS_TOPIC === config.EXTRACT_JOBS_TOPIC ||
      config.EXTRACT_BULK_JOBS_TOPIC === config.EXTRACT_RESULTS_TOPIC
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['EXTRACT_BULK_JOBS_TOPIC'],
        message: 'must differ from EXTRACT_JOBS_TOPIC and EXTRACT_RESULTS_TOPIC',
      });
    }
    if (config.EXTRACT_BULK_WORKERS_GROUP === workersGroupOf(config)) {
      ctx.addIssue({
        code: 'custom',
        path: ['EXTRACT_BULK_WORKERS_GROUP'],
        message: "must differ from the batch workers' group (EXTRACT_WORKERS_GROUP)",
      });
    }
  });

export type ExtractorConfig = z.output<typeof ConfigSchema>;

/** The workers' consumer group: EXTRACT_WORKERS_GROUP, else KAFKA_GROUP_ID, else the default. */
export function workersGroupOf(
  config: Pick<ExtractorConfig, 'EXTRACT_WORKERS_GROUP' | 'KAFKA_GROUP_ID'>,
): string {
  return config.EXTRACT_WORKERS_GROUP ?? config.KAFKA_GROUP_ID ?? CONSUMER_GROUPS.extractWorkers.default;
}

export function loadExtractorConfig(env: Record<string, string | undefined> = process.env): ExtractorConfig {
  return loadConfig(ConfigSchema, env);
}
