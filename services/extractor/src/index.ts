/**
 * @subx/extractor: transcripts, validation and playlists over gRPC (subx.extractor.v1), plus the
 * Kafka extraction workers of batch and playlist requests and, apart from them, of bulk jobs.
 */
import { tmpdir } from 'node:os';
import { PLATFORM_HEALTH_NAME } from '@subx/contracts';
import { createModelTranslator } from './model-translator.ts';
import type { Clock, EventBus, KeyValueStore, Logger, Subscription } from '@subx/ports';
import { createJsonCache, systemClock } from '@subx/ports';
import {
  cacheLookupMetrics,
  canaryMetrics,
  startGrpcServer,
  upstreamMetrics,
  grpcTlsFromConfig,
} from '@subx/service-kit';
import type { PinoLogger } from '@subx/service-kit';
import { registerTranscriptionQueue, transcriptionMetrics } from './transcription/metrics.ts';
import { Canary, YouTubeClient } from '@subx/youtube';
import type { YouTubeClientConfig } from '@subx/youtube';
import type { ExtractorConfig } from './config.ts';
import { workersGroupOf } from './config.ts';
import { createExtractionService, type Transcription } from './extraction-service.ts';
import { TranscriptionClient, isModelVerdict } from './transcription/client.ts';
import { AudioTranscriber } from './transcription/audio-transcriber.ts';
import { findFfmpeg } from './transcription/audio-file.ts';
import { isAppError } from '@subx/errors';
import { extractorServiceRegistration } from './grpc/extractor.handlers.ts';
import { startExtractWorker } from './jobs/extract-worker.ts';
import { createListingService } from './listings/listing-service.ts';
import { createSearchService } from './search/search-service.ts';

/** The platform counts as unreachable while its last request within this window got no answer. */
const PLATFORM_UNREACHABLE_WINDOW_MS = 60_000;

export { createExtractionService, toProtoMetadata } from './extraction-service.ts';
export type { ExtractionService, ExtractionCacheTtl, TranscriptCall } from './extraction-service.ts';
export { createListingService } from './listings/listing-service.ts';
export type { ListingService } from './listings/listing-service.ts';
export { createSearchService, type SearchService } from './search/search-service.ts';
export { ConfigSchema, loadExtractorConfig } from './config.ts';
export type { ExtractorConfig } from './config.ts';
export {
  startExtractWorker,
  EXTRACT_JOBS_TOPIC,
  EXTRACT_RESULTS_TOPIC,
  EXTRACT_WORKERS_GROUP,
  EXTRACT_BULK_JOBS_TOPIC,
  EXTRACT_BULK_WORKERS_GROUP,
} from './jobs/extract-worker.ts';
export type { ExtractWorker } from './jobs/extract-worker.ts';

/**
 * The parsed cache entries kept in memory: up to 2,048 hot transcripts and 8 Mi characters of
 * their stored text. With Redis the text is a copy (up to 16 MB), the parsed values, answers and
 * their encoded bytes a few times that: well inside the 256 MB heap the chart gives the extractor.
 * With the in-memory store the text is the store's own string.
 */
const DECODED_ENTRIES = 2048;
const DECODED_MAX_CHARS = 8 * 1024 * 1024;

export interface StartExtractorServiceOptions {
  readonly config: ExtractorConfig;
  readonly youtube: YouTubeClientConfig;
  readonly kv: KeyValueStore;
  /** When given (and workers are enabled), extraction jobs are consumed from it. */
  readonly bus?: EventBus;
  readonly logger: PinoLogger;
  readonly clock?: Clock;
  /** Overrides GRPC_HOST; the one-process launcher passes '127.0.0.1'. */
  readonly host?: string;
}

/** Speech-to-text from TRANSCRIBE_*, measured (subx_transcription_*); undefined when unset. */
async function transcriptionOf(config: ExtractorConfig, logger: Logger): Promise<Transcription | undefined> {
  if (!config.TRANSCRIBE_BASE_URL) return undefined;
  const client = new TranscriptionClient({
    baseURL: config.TRANSCRIBE_BASE_URL,
    apiKey: config.TRANSCRIBE_API_KEY,
    model: config.TRANSCRIBE_MODEL,
    timeoutMs: config.TRANSCRIBE_TIMEOUT_MS,
    unavailableWaitMs: config.TRANSCRIBE_UNAVAILABLE_WAIT_MS,
  });
  const ffmpeg = await findFfmpeg(config.TRANSCRIBE_FFMPEG);
  if (ffmpeg === undefined) {
    logger.warn(
      { ffmpeg: config.TRANSCRIBE_FFMPEG, maxUploadBytes: config.TRANSCRIBE_UPLOAD_MAX_BYTES },
      'ffmpeg does not run: audio larger than TRANSCRIBE_UPLOAD_MAX_BYTES is refused instead of split',
    );
  }
  const transcriber = new AudioTranscriber(client, {
    spoolDir: config.TRANSCRIBE_SPOOL_DIR ?? tmpdir(),
    maxPartBytes: config.TRANSCRIBE_UPLOAD_MAX_BYTES,
    ffmpeg,
    splitTimeoutMs: SPLIT_TIMEOUT_MS,
    concurrency: config.TRANSCRIBE_CONCURRENCY,
    maxWaiting: config.TRANSCRIBE_QUEUE_MAX,
    maxWaitingPerAccount: config.TRANSCRIBE_QUEUE_PER_ACCOUNT,
  });
  const metrics = transcriptionMetrics();
  registerTranscriptionQueue(() => ({ inFlight: transcriber.inFlight, waiting: transcriber.waiting }));
  return {
    model: config.TRANSCRIBE_MODEL,
    maxSeconds: config.TRANSCRIBE_MAX_SECONDS,
    maxAudioBytes: config.TRANSCRIBE_MAX_AUDIO_BYTES,
    failureTtlMs: config.TRANSCRIBE_FAILURE_TTL_MS,
    minDeadlineMs: config.TRANSCRIBE_TIMEOUT_MS,
    isRemembered: isModelVerdict,
    transcriber: {
      async transcribe(audio, options) {
        const started = performance.now();
        try {
          const heard = await transcriber.transcribe(audio, options);
          metrics.transcribed(heard.durationSeconds, (performance.now() - started) / 1000);
          return heard;
        } catch (err) {
          const reason = isAppError(err) ? err.code : 'UNKNOWN';
          metrics.failed(reason);
          logger.warn({ err, reason }, 'transcription failed');
          throw err;
        }
      },
    },
  };
}

/** Bound on one ffmpeg split: it copies frames, seconds even for hours of audio. */
const SPLIT_TIMEOUT_MS = 120_000;

export interface RunningExtractorService {
  readonly port: number;
  stop(timeoutMs?: number): Promise<void>;
}

export async function startExtractorService(
  options: StartExtractorServiceOptions,
): Promise<RunningExtractorService> {
  const { config, logger } = options;
  const clock = options.clock ?? systemClock;
  const upstream = upstreamMetrics('extractor');
  const youtube = YouTubeClient.create(options.youtube, {
    ...(config.OPENAI_API_KEY
      ? {
          translator: createModelTranslator({
            baseUrl: config.OPENAI_BASE_URL,
            apiKey: config.OPENAI_API_KEY,
            model: config.AI_MODEL,
            timeoutMs: config.TRANSLATION_TIMEOUT_MS,
            maxRetries: 2,
          }),
        }
      : {}),
    clock,
    logger: logger.child({ component: 'youtube' }),
    observer: upstream,
  });
  // CANARY_VIDEOS: a known video through every client of the ladder and every egress, on a timer,
  // in the same upstream metrics, so a client the platform retired shows before users see it.
  const canary =
    options.youtube.canary.videos.length > 0
      ? new Canary({
          config: () => youtube.config,
          videos: options.youtube.canary.videos,
          intervalMs: options.youtube.canary.intervalMs,
          observer: upstream,
          logger: logger.child({ component: 'canary' }),
          onProbe: canaryMetrics(),
          // candidate identities (TV_SAMSUNG, IOS_PRODUCER) are adopted or demoted by these probes only
          ladder: youtube.ladder,
        })
      : undefined;
  canary?.start();
  const cache = createJsonCache(options.kv, {
    prefix: 'extractor',
    onLookup: cacheLookupMetrics(),
    // Hot entries are not parsed again on every read, and their answers are made once
    // (extraction-service.ts); the store still answers every read.
    decodedEntries: DECODED_ENTRIES,
    decodedMaxChars: DECODED_MAX_CHARS,
  });
  const transcription = await transcriptionOf(config, logger);
  const extraction = createExtractionService({
    youtube,
    cache,
    ttl: {
      transcriptMs: config.TRANSCRIPT_CACHE_TTL_MS,
      validateMs: config.VALIDATE_CACHE_TTL_MS,
      playlistMs: config.PLAYLIST_CACHE_TTL_MS,
    },
    clock,
    ...(transcription ? { transcription } : {}),
  });
  const server = await startGrpcServer({
    port: config.GRPC_PORT,
    host: options.host ?? config.GRPC_HOST,
    credentials: grpcTlsFromConfig(config).serverCredentials,
    services: [
      extractorServiceRegistration(
        extraction,
        createListingService({ youtube, cache, ttlMs: config.PLAYLIST_CACHE_TTL_MS }),
        createSearchService({ youtube, cache, ttlMs: config.SEARCH_CACHE_TTL_MS }),
      ),
    ],
    logger,
    health: { names: [PLATFORM_HEALTH_NAME] },
  });
  // Whether the platform answers at all, for the gateway's /health: re-read every few seconds from
  // the client's own record of its requests (no probe of our own: probes cost platform budget).
  const platformWatch = setInterval(() => {
    server.health.setServing(
      PLATFORM_HEALTH_NAME,
      !youtube.upstreamStats.unreachable(PLATFORM_UNREACHABLE_WINDOW_MS),
    );
  }, 5_000);
  platformWatch.unref();
  let worker: Subscription | undefined;
  let bulkWorker: Subscription | undefined;
  if (options.bus && config.EXTRACT_WORKERS_ENABLED) {
    const answering = {
      bus: options.bus,
      extraction,
      clock,
      resultsTopic: config.EXTRACT_RESULTS_TOPIC,
      ...(config.EXTRACT_REPLY_TOPICS ? { replyTopics: config.EXTRACT_REPLY_TOPICS } : {}),
    };
    try {
      worker = await startExtractWorker({
        ...answering,
        logger: logger.child({ component: 'extract-worker' }),
        groupId: workersGroupOf(config),
        members: config.EXTRACT_WORKER_MEMBERS,
        concurrency: config.EXTRACT_WORKER_CONCURRENCY,
        topic: config.EXTRACT_JOBS_TOPIC,
      });
      // Bulk jobs' videos on their own topic and group, with their own (lower) concurrency: a job
      // of thousands of videos fills only these slots, and batch/playlist jobs never queue behind it.
      bulkWorker = await startExtractWorker({
        ...answering,
        logger: logger.child({ component: 'extract-bulk-worker' }),
        groupId: config.EXTRACT_BULK_WORKERS_GROUP,
        members: config.EXTRACT_BULK_WORKER_MEMBERS,
        concurrency: config.EXTRACT_BULK_WORKER_CONCURRENCY,
        topic: config.EXTRACT_BULK_JOBS_TOPIC,
      });
    } catch (error) {
      // A half-started service would keep its gRPC port and the first worker's members.
      await worker?.stop();
      clearInterval(platformWatch);
      await server.shutdown(config.SHUTDOWN_TIMEOUT_MS);
      await canary?.close();
      throw error;
    }
  }
  logger.info(
    {
      port: server.port,
      workers: worker !== undefined,
      bulk_workers: bulkWorker !== undefined,
      youtube: options.youtube.baseUrl,
      canary: canary ? options.youtube.canary.videos.map((v) => v.id) : 'off',
    },
    'extractor started',
  );
  return {
    port: server.port,
    async stop(timeoutMs = config.SHUTDOWN_TIMEOUT_MS) {
      // Stop taking jobs first (the in-flight ones finish and commit), then the gRPC intake.
      await Promise.all([worker?.stop(), bulkWorker?.stop()]);
      clearInterval(platformWatch);
      await server.shutdown(timeoutMs);
      await canary?.close();
    },
  };
}
