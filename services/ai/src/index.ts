/**
 * @subx/ai: summaries and comment analysis over gRPC (subx.ai.v1.AiService).
 * `startAiService` is the entry point for the one-process launcher and for main.ts.
 */
import type { Clock, KeyValueStore } from '@subx/ports';
import { systemClock } from '@subx/ports';
import { startGrpcServer, grpcTlsFromConfig } from '@subx/service-kit';
import type { PinoLogger } from '@subx/service-kit';
import { createUpstreamClients } from './adapters/grpc-sources.ts';
import { createAiService } from './ai-service.ts';
import type { AiConfig } from './config.ts';
import { createEngineFromConfig } from './engine-from-config.ts';
import { aiServiceRegistration } from './grpc/ai.handlers.ts';
import type { CommentSource, TranscriptSource } from './sources.ts';

export { createAiService, DAY_MS } from './ai-service.ts';
export type { AiService, AiServiceDeps } from './ai-service.ts';
export { ConfigSchema, loadAiConfig } from './config.ts';
export type { AiConfig } from './config.ts';
export { createEngineFromConfig } from './engine-from-config.ts';
export { createLocalEngine } from './model/local-engine.ts';
export { createModelEngine } from './model/model-engine.ts';
export type { AiEngine, AnalysisEngine, SummaryEngine } from './model/engine.ts';
export type { CommentSource, CommentsPage, TranscriptSource } from './sources.ts';
export { aiServiceRegistration } from './grpc/ai.handlers.ts';

export interface StartAiServiceOptions {
  readonly config: AiConfig;
  readonly kv: KeyValueStore;
  readonly logger: PinoLogger;
  readonly clock?: Clock;
  /** Overrides GRPC_HOST; the one-process launcher passes '127.0.0.1'. */
  readonly host?: string;
  /** Overrides of the gRPC clients of the extractor and comments services (tests, embedding). */
  readonly transcripts?: TranscriptSource;
  readonly comments?: CommentSource;
}

export interface RunningAiService {
  readonly port: number;
  /** Graceful: health NOT_SERVING, in-flight calls finish, then upstream channels close. */
  stop(timeoutMs?: number): Promise<void>;
}

/** Builds the AI service from configuration and serves it on GRPC_PORT (0 = any free port). */
export async function startAiService(options: StartAiServiceOptions): Promise<RunningAiService> {
  const { config, logger } = options;
  const upstream =
    options.transcripts && options.comments
      ? undefined
      : createUpstreamClients({
          extractorAddr: config.EXTRACTOR_GRPC_ADDR,
          commentsAddr: config.COMMENTS_GRPC_ADDR,
          deadlineMs: config.GRPC_DEFAULT_DEADLINE_MS,
          logger,
          tls: grpcTlsFromConfig(config).client,
        });
  const engine = createEngineFromConfig(config, (event) => logger.info({ event }, 'model engine event'));
  const service = createAiService({
    engine,
    transcripts: options.transcripts ?? upstream!.transcripts,
    comments: options.comments ?? upstream!.comments,
    cache: options.kv,
    clock: options.clock ?? systemClock,
    summaryTtlMs: config.SUMMARY_CACHE_TTL_MS,
    analysisTtlMs: config.ANALYSIS_CACHE_TTL_MS,
  });
  const server = await startGrpcServer({
    port: config.GRPC_PORT,
    host: options.host ?? config.GRPC_HOST,
    credentials: grpcTlsFromConfig(config).serverCredentials,
    services: [aiServiceRegistration(service)],
    logger,
  });
  logger.info(
    { port: server.port, summary_engine: engine.summaryModel, analysis_engine: engine.analysisModel },
    'AI service started',
  );
  return {
    port: server.port,
    async stop(timeoutMs = config.SHUTDOWN_TIMEOUT_MS) {
      await server.shutdown(timeoutMs);
      upstream?.close();
    },
  };
}
