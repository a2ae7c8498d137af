/**
 * The gRPC adapter: one generated-service client per backend through service-kit's client kit
 * (deadlines, cancellation, `x-request-id`, AppError rebuilt from the trailing metadata). The
 * extractor's transcripts requested within a few event-loop turns go as one batch on a
 * StreamTranscripts lane (transcript-batcher.ts).
 */
import type * as grpc from '@grpc/grpc-js';
import { PLATFORM_HEALTH_NAME, aiV1, billingV1, commentsV1, extractorV1 } from '@subx/contracts';
import { checkHealth, createGrpcClient, grpcTlsFromConfig } from '@subx/service-kit';
import type { Logger } from '@subx/ports';
import type { GrpcClient } from '@subx/service-kit';
import { createTranscriptBatcher } from './transcript-batcher.ts';
import type { AiBackend, Backends, BillingBackend, CommentsBackend, ExtractorBackend } from './types.ts';

export interface GrpcBackendsConfig {
  extractorAddress: string;
  commentsAddress: string;
  aiAddress: string;
  billingAddress: string;
  deadlineMs: number;
  aiDeadlineMs: number;
  logger?: Logger;
  credentials?: grpc.ChannelCredentials;
  channelOptions?: grpc.ChannelOptions;
}

export interface GrpcBackends extends Backends {
  /** False when any channel is in TRANSIENT_FAILURE (readiness). */
  channelsHealthy(): boolean;
  close(): void;
}

/** SERVING for the named service, or for the whole server when it does not know the name. */
export async function healthy(
  client: GrpcClient<grpc.Client>,
  serviceName: string,
  timeoutMs: number,
): Promise<boolean> {
  const state = await checkHealth(client.raw, serviceName, timeoutMs);
  // A server that only reports the overall status ('') does not know the service name.
  if (state === 'UNKNOWN') return (await checkHealth(client.raw, '', timeoutMs)) === 'SERVING';
  return state === 'SERVING';
}

/** The variables a caller's configuration names its backends with (the gateway's, the job service's). */
export type GrpcBackendsEnv = Parameters<typeof grpcTlsFromConfig>[0] & {
  EXTRACTOR_GRPC_ADDR: string;
  COMMENTS_GRPC_ADDR: string;
  AI_GRPC_ADDR: string;
  BILLING_GRPC_ADDR: string;
  GRPC_DEADLINE_MS: number;
  AI_GRPC_DEADLINE_MS: number;
};

/** The backends at the addresses and with the deadlines of a service's configuration. */
export function grpcBackendsFromConfig(config: GrpcBackendsEnv, logger?: Logger): GrpcBackends {
  // GRPC_TLS*: TLS (and a client certificate for mutual TLS) to every backend, or plaintext.
  const tls = grpcTlsFromConfig(config).client;
  return createGrpcBackends({
    credentials: tls.credentials,
    channelOptions: tls.channelOptions,
    extractorAddress: config.EXTRACTOR_GRPC_ADDR,
    commentsAddress: config.COMMENTS_GRPC_ADDR,
    aiAddress: config.AI_GRPC_ADDR,
    billingAddress: config.BILLING_GRPC_ADDR,
    deadlineMs: config.GRPC_DEADLINE_MS,
    aiDeadlineMs: config.AI_GRPC_DEADLINE_MS,
    ...(logger ? { logger } : {}),
  });
}

export interface GrpcExtractorConfig {
  address: string;
  deadlineMs: number;
  logger?: Logger;
  credentials?: grpc.ChannelCredentials;
  channelOptions?: grpc.ChannelOptions;
}

/** The extractor alone (the job service calls no other backend). */
export function createGrpcExtractor(config: GrpcExtractorConfig): {
  extractor: ExtractorBackend;
  channelHealthy(): boolean;
  close(): void;
} {
  const common = {
    ...(config.logger ? { logger: config.logger } : {}),
    ...(config.credentials ? { credentials: config.credentials } : {}),
    ...(config.channelOptions ? { channelOptions: config.channelOptions } : {}),
  };
  const ex = createGrpcClient(extractorV1.ExtractorServiceClient, config.address, {
    ...common,
    defaultDeadlineMs: config.deadlineMs,
    label: 'extractor',
  });
  // Concurrent GetTranscript calls go as one batch on a StreamTranscripts lane (transcript-batcher.ts).
  const getTranscript = createTranscriptBatcher({
    client: ex.raw,
    unary: (req, opts) => ex.getTranscript(req, opts),
    defaultDeadlineMs: config.deadlineMs,
    label: 'extractor',
    ...(config.logger ? { logger: config.logger } : {}),
  });
  const extractor: ExtractorBackend = {
    getTranscript,
    validateVideo: (req, opts) => ex.validateVideo(req, opts),
    getPlaylist: (req, opts) => ex.getPlaylist(req, opts),
    listPlaylistVideos: (req, opts) => ex.listPlaylistVideos(req, opts),
    listChannelVideos: (req, opts) => ex.listChannelVideos(req, opts),
    search: (req, opts) => ex.search(req, opts),
    listSearchVideos: (req, opts) => ex.listSearchVideos(req, opts),
    checkHealth: (timeoutMs) => healthy(ex, extractorV1.ExtractorServiceClient.serviceName, timeoutMs),
    checkPlatform: async (timeoutMs) =>
      (await checkHealth(ex.raw, PLATFORM_HEALTH_NAME, timeoutMs)) !== 'NOT_SERVING',
  };
  return {
    extractor,
    channelHealthy: () => ex.connectivityState() !== 'TRANSIENT_FAILURE',
    close: () => {
      getTranscript.close();
      ex.close();
    },
  };
}

export function createGrpcBackends(config: GrpcBackendsConfig): GrpcBackends {
  const common = {
    ...(config.logger ? { logger: config.logger } : {}),
    ...(config.credentials ? { credentials: config.credentials } : {}),
    ...(config.channelOptions ? { channelOptions: config.channelOptions } : {}),
  };
  const ex = createGrpcExtractor({
    ...common,
    address: config.extractorAddress,
    deadlineMs: config.deadlineMs,
  });
  const co = createGrpcClient(commentsV1.CommentsServiceClient, config.commentsAddress, {
    ...common,
    defaultDeadlineMs: config.deadlineMs,
    label: 'comments',
  });
  const ai = createGrpcClient(aiV1.AiServiceClient, config.aiAddress, {
    ...common,
    defaultDeadlineMs: config.aiDeadlineMs,
    label: 'ai',
  });
  const bi = createGrpcClient(billingV1.BillingServiceClient, config.billingAddress, {
    ...common,
    defaultDeadlineMs: config.deadlineMs,
    label: 'billing',
  });

  const extractor = ex.extractor;
  const comments: CommentsBackend = {
    getComments: (req, opts) => co.getComments(req, opts),
    checkHealth: (timeoutMs) => healthy(co, commentsV1.CommentsServiceClient.serviceName, timeoutMs),
  };
  const aiBackend: AiBackend = {
    summarize: (req, opts) => ai.summarize(req, opts),
    analyzeComments: (req, opts) => ai.analyzeComments(req, opts),
    checkHealth: (timeoutMs) => healthy(ai, aiV1.AiServiceClient.serviceName, timeoutMs),
  };
  const billing: BillingBackend = {
    getUsage: (req, opts) => bi.getUsage(req, opts),
    checkHealth: (timeoutMs) => healthy(bi, billingV1.BillingServiceClient.serviceName, timeoutMs),
  };
  const clients = [co, ai, bi];
  return {
    extractor,
    comments,
    ai: aiBackend,
    billing,
    channelsHealthy: () =>
      ex.channelHealthy() && clients.every((c) => c.connectivityState() !== 'TRANSIENT_FAILURE'),
    close: () => {
      ex.close();
      clients.forEach((c) => c.close());
    },
  };
}
