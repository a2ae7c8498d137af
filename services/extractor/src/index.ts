/**
 * @subx/extractor: transcripts, validation and playlists over gRPC (subx.extractor.v1), plus the
 * Kafka extraction workers of batch and playlist requests.
 */
import type { Clock, EventBus, KeyValueStore, Subscription } from '@subx/ports';
import { createJsonCache, systemClock } from '@subx/ports';
import { cacheLookupMetrics, startGrpcServer, upstreamMetrics, grpcTlsFromConfig } from '@subx/service-kit';
import type { Logger } from '@subx/service-kit';
import { YouTubeClient } from '@subx/youtube';
import type { YouTubeClientConfig } from '@subx/youtube';
import type { ExtractorConfig } from './config.ts';
import { workersGroupOf } from './config.ts';
import { createExtractionService } from './extraction-service.ts';
import { extractorServiceRegistration } from './grpc/extractor.handlers.ts';
import { startExtractWorker } from './jobs/extract-worker.ts';

export { createExtractionService, toProtoMetadata } from './extraction-service.ts';
export type { ExtractionService, ExtractionCacheTtl } from './extraction-service.ts';
export { ConfigSchema, loadExtractorConfig } from './config.ts';
export type { ExtractorConfig } from './config.ts';
export {
  startExtractWorker,
  EXTRACT_JOBS_TOPIC,
  EXTRACT_RESULTS_TOPIC,
  EXTRACT_WORKERS_GROUP,
} from './jobs/extract-worker.ts';
export type { ExtractWorker } from './jobs/extract-worker.ts';

export interface StartExtractorServiceOptions {
  readonly config: ExtractorConfig;
  readonly youtube: YouTubeClientConfig;
  readonly kv: KeyValueStore;
  /** When given (and workers are enabled), extraction jobs are consumed from it. */
  readonly bus?: EventBus;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** Overrides GRPC_HOST; the one-process launcher passes '127.0.0.1'. */
  readonly host?: string;
}

export interface RunningExtractorService {
  readonly port: number;
  stop(timeoutMs?: number): Promise<void>;
}

export async function startExtractorService(
  options: StartExtractorServiceOptions,
): Promise<RunningExtractorService> {
  const { config, logger } = options;
  const clock = options.clock ?? systemClock;
  const youtube = YouTubeClient.create(options.youtube, {
    clock,
    logger: logger.child({ component: 'youtube' }),
    observer: upstreamMetrics('extractor'),
  });
  const extraction = createExtractionService({
    youtube,
    cache: createJsonCache(options.kv, { prefix: 'extractor', onLookup: cacheLookupMetrics() }),
    ttl: {
      transcriptMs: config.TRANSCRIPT_CACHE_TTL_MS,
      validateMs: config.VALIDATE_CACHE_TTL_MS,
      playlistMs: config.PLAYLIST_CACHE_TTL_MS,
    },
    clock,
  });
  const server = await startGrpcServer({
    port: config.GRPC_PORT,
    host: options.host ?? config.GRPC_HOST,
    credentials: grpcTlsFromConfig(config).serverCredentials,
    services: [extractorServiceRegistration(extraction)],
    logger,
  });
  let worker: Subscription | undefined;
  if (options.bus && config.EXTRACT_WORKERS_ENABLED) {
    worker = await startExtractWorker({
      bus: options.bus,
      extraction,
      logger: logger.child({ component: 'extract-worker' }),
      clock,
      groupId: workersGroupOf(config),
      members: config.EXTRACT_WORKER_MEMBERS,
      concurrency: config.EXTRACT_WORKER_CONCURRENCY,
      topic: config.EXTRACT_JOBS_TOPIC,
      resultsTopic: config.EXTRACT_RESULTS_TOPIC,
      ...(config.EXTRACT_REPLY_TOPICS ? { replyTopics: config.EXTRACT_REPLY_TOPICS } : {}),
    });
  }
  logger.info(
    { port: server.port, workers: worker !== undefined, youtube: options.youtube.baseUrl },
    'extractor started',
  );
  return {
    port: server.port,
    async stop(timeoutMs = config.SHUTDOWN_TIMEOUT_MS) {
      // Stop taking jobs first (the in-flight ones finish and commit), then the gRPC intake.
      await worker?.stop();
      await server.shutdown(timeoutMs);
    },
  };
}
