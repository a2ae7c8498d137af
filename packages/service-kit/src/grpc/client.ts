/** Clients with default deadlines, request ids and metrics that turn failures back into AppErrors. */
import * as grpc from '@grpc/grpc-js';
import { Errors } from '@subx/errors';
import type { Logger } from '@subx/ports';
import { observeGrpcCall } from '../metrics/grpc.ts';
import { REQUEST_ID_HEADER, fromGrpcError, grpcStatusName } from './errors.ts';
import { serviceNameOf } from './service-definition.ts';
import type { ServiceMethods } from './service-definition.ts';

type UnaryClientMethod = (
  request: any, // eslint-disable-line @typescript-eslint/no-explicit-any
  metadata: grpc.Metadata,
  options: Partial<grpc.CallOptions>,
  callback: (error: grpc.ServiceError | null, response: any) => void, // eslint-disable-line @typescript-eslint/no-explicit-any
) => grpc.ClientUnaryCall;

// A streaming method with fewer parameters is assignable to UnaryClientMethod too: its return
// type tells it apart.
type StreamingClientMethod = (...args: any[]) => grpc.ClientReadableStream<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Names of the unary methods of a ts-proto client interface. */
export type UnaryMethodNames<C> = {
  [K in keyof C]-?: C[K] extends StreamingClientMethod ? never : C[K] extends UnaryClientMethod ? K : never;
}[keyof C] &
  string;

// Inference on an overloaded method uses its last overload, which in ts-proto output is the
// (request, metadata, options, callback) one.
export type ClientRequest<F> = F extends (
  request: infer R,
  metadata: grpc.Metadata,
  ...rest: infer _
) => unknown
  ? R
  : never;
export type ClientResponse<F> = F extends (
  request: never,
  metadata: grpc.Metadata,
  options: Partial<grpc.CallOptions>,
  callback: (error: grpc.ServiceError | null, response: infer R) => void,
) => unknown
  ? R
  : never;

export interface UnaryCallOptions {
  /** Overrides the client's default deadline. */
  deadlineMs?: number;
  /** Absolute deadline (e.g. the incoming call's `ctx.deadline`); the earlier of the two wins. */
  deadline?: Date;
  /** Sent as x-request-id. */
  requestId?: string;
  metadata?: Record<string, string> | grpc.Metadata;
  signal?: AbortSignal;
}

export type PromiseClient<C> = {
  [K in UnaryMethodNames<C>]: (
    request: ClientRequest<C[K]>,
    options?: UnaryCallOptions,
  ) => Promise<ClientResponse<C[K]>>;
};

export interface ClientConstructor<C extends grpc.Client> {
  new (address: string, credentials: grpc.ChannelCredentials, options?: Partial<grpc.ClientOptions>): C;
  service: grpc.ServiceDefinition;
  serviceName?: string;
}

export interface CreateGrpcClientOptions {
  /** Default 5000 ms (GRPC_DEFAULT_DEADLINE_MS). */
  defaultDeadlineMs?: number;
  logger?: Logger;
  /** Used in error messages ("The comments service is not reachable"); default from the service name. */
  label?: string;
  credentials?: grpc.ChannelCredentials;
  channelOptions?: grpc.ChannelOptions;
}

interface ClientDefaults {
  defaultDeadlineMs: number;
  label: string;
  logger: Logger | undefined;
}

const clientDefaults = new WeakMap<grpc.Client, ClientDefaults>();

/**
 * grpc-js backs off reconnects from 1 s up to 120 s: after a longer outage a restarted peer stayed
 * unreachable (calls fail fast with UNAVAILABLE) for up to two minutes. Capped at 2 s, a restarted
 * peer is used again within about 2 s. Callers may override through `channelOptions`.
 */
export const RECONNECT_BACKOFF: grpc.ChannelOptions = {
  'grpc.initial_reconnect_backoff_ms': 250,
  'grpc.max_reconnect_backoff_ms': 2_000,
};

/**
 * HTTP/2's default receive window is 64 KiB: an answer larger than that (a long video's
 * transcript, the grouped answers of a StreamTranscripts message) comes in 64 KiB steps, each waiting for
 * the client's WINDOW_UPDATE. A 4 MiB window (gRPC's default largest message) lets the server send
 * any one answer at once, which more than doubles the rate of uncached extracts of long
 * transcripts (docs/benchmarks.md, "Transcript batching"). Callers may override through
 * `channelOptions`.
 */
export const FLOW_CONTROL_WINDOW: grpc.ChannelOptions = {
  'grpc-node.flow_control_window': 4 * 1024 * 1024,
};

export type GrpcClient<C extends grpc.Client> = PromiseClient<C> & {
  readonly raw: C;
  readonly address: string;
  /** Channel connectivity: 'IDLE' | 'CONNECTING' | 'READY' | 'TRANSIENT_FAILURE' | 'SHUTDOWN'. */
  connectivityState(): keyof typeof grpc.connectivityState;
  close(): void;
};

function labelOf(serviceName: string | undefined): string {
  const parts = (serviceName ?? '').split('.');
  return parts.length >= 3 ? (parts[1] ?? serviceName ?? 'upstream') : serviceName || 'upstream';
}

/**
 * A client for a ts-proto generated client class: `client.getComments(req, { requestId })` returns
 * a Promise and rejects with AppError. `client.raw` is the generated client itself.
 */
export function createGrpcClient<C extends grpc.Client>(
  Ctor: ClientConstructor<C>,
  address: string,
  options: CreateGrpcClientOptions = {},
): GrpcClient<C> {
  const raw = new Ctor(address, options.credentials ?? grpc.credentials.createInsecure(), {
    ...RECONNECT_BACKOFF,
    ...FLOW_CONTROL_WINDOW,
    ...options.channelOptions,
  });
  const serviceName = Ctor.serviceName ?? serviceNameOf(Ctor.service as unknown as ServiceMethods);
  clientDefaults.set(raw, {
    defaultDeadlineMs: options.defaultDeadlineMs ?? 5_000,
    label: options.label ?? labelOf(serviceName),
    logger: options.logger,
  });
  const methods: Record<string, unknown> = {};
  for (const [name, def] of Object.entries(Ctor.service)) {
    // Streaming methods have no promise form; they are used through `raw`.
    if (def.requestStream || def.responseStream) continue;
    methods[name] = (request: unknown, callOptions?: UnaryCallOptions) =>
      unaryCall(raw, name as never, request as never, callOptions);
  }
  return Object.assign(methods, {
    raw,
    address,
    connectivityState: () =>
      grpc.connectivityState[
        raw.getChannel().getConnectivityState(false)
      ] as keyof typeof grpc.connectivityState,
    close: () => raw.close(),
  }) as GrpcClient<C>;
}

/** '/pkg.Service/Method' of a generated client's method: the same label the server side uses. */
function methodPath(client: grpc.Client, method: string): string {
  const service = (client.constructor as { service?: Record<string, { path?: string }> }).service;
  return service?.[method]?.path ?? `/unknown/${method}`;
}

/** One unary call with a deadline, request id and AppError mapping, on any generated client. */
export function unaryCall<C extends grpc.Client, K extends UnaryMethodNames<C>>(
  client: C,
  method: K,
  request: ClientRequest<C[K]>,
  options: UnaryCallOptions = {},
): Promise<ClientResponse<C[K]>> {
  const defaults = clientDefaults.get(client) ?? {
    defaultDeadlineMs: 5_000,
    label: 'upstream',
    logger: undefined,
  };
  const metadata = options.metadata instanceof grpc.Metadata ? options.metadata.clone() : new grpc.Metadata();
  if (options.metadata && !(options.metadata instanceof grpc.Metadata)) {
    for (const [key, value] of Object.entries(options.metadata)) metadata.set(key, value);
  }
  if (options.requestId) metadata.set(REQUEST_ID_HEADER, options.requestId);
  let deadline = Date.now() + (options.deadlineMs ?? defaults.defaultDeadlineMs);
  if (options.deadline) deadline = Math.min(deadline, options.deadline.getTime());

  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) {
      reject(Errors.internal(options.signal.reason));
      return;
    }
    const fn = (client as unknown as Record<string, UnaryClientMethod>)[method];
    if (typeof fn !== 'function') {
      reject(new Error(`no unary method "${method}" on this client`));
      return;
    }
    const t0 = performance.now();
    const call = fn.call(client, request, metadata, { deadline }, (error, response) => {
      options.signal?.removeEventListener('abort', onAbort);
      observeGrpcCall(
        'client',
        methodPath(client, method),
        grpcStatusName(error ? error.code : grpc.status.OK),
        (performance.now() - t0) / 1000,
      );
      if (error) {
        const appError = fromGrpcError(error, defaults.label);
        defaults.logger?.debug(
          { rpc: method, grpc_code: error.code, code: appError.code, request_id: options.requestId },
          'gRPC call failed',
        );
        reject(appError);
      } else {
        resolve(response as ClientResponse<C[K]>);
      }
    });
    const onAbort = () => call.cancel();
    options.signal?.addEventListener('abort', onAbort, { once: true });
  });
}
