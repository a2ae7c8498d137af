/** @subx/comments: comment downloads over gRPC (subx.comments.v1.CommentsService). */
import type { Clock, KeyValueStore } from '@subx/ports';
import { createJsonCache, systemClock } from '@subx/ports';
import { cacheLookupMetrics, startGrpcServer, upstreamMetrics, grpcTlsFromConfig } from '@subx/service-kit';
import type { PinoLogger } from '@subx/service-kit';
import { YouTubeClient } from '@subx/youtube';
import type { YouTubeClientConfig } from '@subx/youtube';
import type { CommentsConfig } from './config.ts';
import { createCommentsService } from './comments-service.ts';
import { commentsServiceRegistration } from './grpc/comments.handlers.ts';

export { createCommentsService, MAX_COMMENTS } from './comments-service.ts';
export type { CommentsService } from './comments-service.ts';
export { ConfigSchema, loadCommentsConfig } from './config.ts';
export type { CommentsConfig } from './config.ts';

export interface StartCommentsServiceOptions {
  readonly config: CommentsConfig;
  readonly youtube: YouTubeClientConfig;
  readonly kv: KeyValueStore;
  readonly logger: PinoLogger;
  readonly clock?: Clock;
  readonly host?: string;
}

export interface RunningCommentsService {
  readonly port: number;
  stop(timeoutMs?: number): Promise<void>;
}

export async function startCommentsService(
  options: StartCommentsServiceOptions,
): Promise<RunningCommentsService> {
  const { config, logger } = options;
  const clock = options.clock ?? systemClock;
  const youtube = YouTubeClient.create(options.youtube, {
    clock,
    logger: logger.child({ component: 'youtube' }),
    observer: upstreamMetrics('comments'),
  });
  const service = createCommentsService({
    youtube,
    cache: createJsonCache(options.kv, { prefix: 'comments', onLookup: cacheLookupMetrics() }),
    ttlMs: config.COMMENTS_CACHE_TTL_MS,
  });
  const server = await startGrpcServer({
    port: config.GRPC_PORT,
    host: options.host ?? config.GRPC_HOST,
    credentials: grpcTlsFromConfig(config).serverCredentials,
    services: [commentsServiceRegistration(service)],
    logger,
  });
  logger.info({ port: server.port, youtube: options.youtube.baseUrl }, 'comments service started');
  return {
    port: server.port,
    async stop(timeoutMs = config.SHUTDOWN_TIMEOUT_MS) {
      await server.shutdown(timeoutMs);
    },
  };
}
