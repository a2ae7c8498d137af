/**
 * The gRPC adapter: one generated-service client per backend, promise-based, with deadlines,
 * cancellation, `x-request-id` propagation and AppError mapping.
 */
import * as grpc from '@grpc/grpc-js';
import { aiV1, billingV1, commentsV1, extractorV1 } from '@subx/contracts';
import { service as healthService } from 'grpc-health-check';
import { fromGrpcError } from './grpc-errors.ts';
import type {
  AiBackend,
  Backends,
  BillingBackend,
  CallOptions,
  CommentsBackend,
  ExtractorBackend,
} from './types.ts';

interface MethodDefinition<Req, Res> {
  path: string;
  requestSerialize(value: Req): Buffer;
  responseDeserialize(value: Buffer): Res;
}

interface Channel {
  client: grpc.Client;
  service: string;
  /** Fully-qualified gRPC service name, for the health check. */
  serviceName: string;
  defaultDeadlineMs: number;
}

function unary<Req, Res>(
  channel: Channel,
  method: MethodDefinition<Req, Res>,
  request: Req,
  options: CallOptions = {},
): Promise<Res> {
  return new Promise<Res>((resolve, reject) => {
    if (options.signal?.aborted) {
      reject(fromGrpcError(cancelledError(), channel.service));
      return;
    }
    const metadata = new grpc.Metadata();
    if (options.requestId) metadata.set('x-request-id', options.requestId);
    const deadline = new Date(Date.now() + (options.deadlineMs ?? channel.defaultDeadlineMs));
    const onAbort = () => call.cancel();
    const call = channel.client.makeUnaryRequest(
      method.path,
      method.requestSerialize,
      method.responseDeserialize,
      request,
      metadata,
      { deadline },
      (error, response) => {
        options.signal?.removeEventListener('abort', onAbort);
        if (error) reject(fromGrpcError(error, channel.service));
        else if (response === undefined) reject(fromGrpcError(cancelledError(), channel.service));
        else resolve(response);
      },
    );
    options.signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function cancelledError(): grpc.ServiceError {
  return Object.assign(new Error('cancelled'), {
    code: grpc.status.CANCELLED,
    details: 'cancelled',
    metadata: new grpc.Metadata(),
  });
}

const healthCheck = healthService.Check as unknown as MethodDefinition<
  { service: string },
  { status: string }
>;

async function checkHealth(channel: Channel, timeoutMs: number): Promise<boolean> {
  const ask = (service: string) =>
    new Promise<string>((resolve, reject) => {
      channel.client.makeUnaryRequest(
        healthCheck.path,
        healthCheck.requestSerialize,
        healthCheck.responseDeserialize,
        { service },
        new grpc.Metadata(),
        { deadline: new Date(Date.now() + timeoutMs) },
        (error, response) => (error ? reject(error) : resolve(response?.status ?? 'UNKNOWN')),
      );
    });
  try {
    return (await ask(channel.serviceName)) === 'SERVING';
  } catch (error) {
    // A server that registers only the overall status ('') answers NOT_FOUND for the name.
    if ((error as grpc.ServiceError).code !== grpc.status.NOT_FOUND) return false;
    try {
      return (await ask('')) === 'SERVING';
    } catch {
      return false;
    }
  }
}

export interface GrpcBackendsConfig {
  extractorAddress: string;
  commentsAddress: string;
  aiAddress: string;
  billingAddress: string;
  deadlineMs: number;
  aiDeadlineMs: number;
  credentials?: grpc.ChannelCredentials;
}

export interface GrpcBackends extends Backends {
  /** False when any channel is in TRANSIENT_FAILURE (readiness). */
  channelsHealthy(): boolean;
  close(): void;
}

export function createGrpcBackends(config: GrpcBackendsConfig): GrpcBackends {
  const credentials = config.credentials ?? grpc.credentials.createInsecure();
  const channel = (
    address: string,
    service: string,
    serviceName: string,
    defaultDeadlineMs: number,
  ): Channel => ({
    client: new grpc.Client(address, credentials),
    service,
    serviceName,
    defaultDeadlineMs,
  });
  const ex = channel(
    config.extractorAddress,
    'extractor',
    'subx.extractor.v1.ExtractorService',
    config.deadlineMs,
  );
  const co = channel(
    config.commentsAddress,
    'comments',
    'subx.comments.v1.CommentsService',
    config.deadlineMs,
  );
  const ai = channel(config.aiAddress, 'ai', 'subx.ai.v1.AiService', config.aiDeadlineMs);
  const bi = channel(config.billingAddress, 'billing', 'subx.billing.v1.BillingService', config.deadlineMs);
  const E = extractorV1.ExtractorServiceService;
  const C = commentsV1.CommentsServiceService;
  const A = aiV1.AiServiceService;
  const B = billingV1.BillingServiceService;

  const extractor: ExtractorBackend = {
    getTranscript: (req, opts) => unary(ex, E.getTranscript, req, opts),
    validateVideo: (req, opts) => unary(ex, E.validateVideo, req, opts),
    getPlaylist: (req, opts) => unary(ex, E.getPlaylist, req, opts),
    checkHealth: (timeoutMs) => checkHealth(ex, timeoutMs),
  };
  const comments: CommentsBackend = {
    getComments: (req, opts) => unary(co, C.getComments, req, opts),
    checkHealth: (timeoutMs) => checkHealth(co, timeoutMs),
  };
  const aiBackend: AiBackend = {
    summarize: (req, opts) => unary(ai, A.summarize, req, opts),
    analyzeComments: (req, opts) => unary(ai, A.analyzeComments, req, opts),
    checkHealth: (timeoutMs) => checkHealth(ai, timeoutMs),
  };
  const billing: BillingBackend = {
    getUsage: (req, opts) => unary(bi, B.getUsage, req, opts),
    checkHealth: (timeoutMs) => checkHealth(bi, timeoutMs),
  };
  const channels = [ex, co, ai, bi];
  return {
    extractor,
    comments,
    ai: aiBackend,
    billing,
    channelsHealthy: () =>
      channels.every(
        (c) => c.client.getChannel().getConnectivityState(false) !== grpc.connectivityState.TRANSIENT_FAILURE,
      ),
    close: () => channels.forEach((c) => c.client.close()),
  };
}
