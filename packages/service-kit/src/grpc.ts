/**
 * gRPC kit: server start/shutdown with grpc.health.v1, async handlers with request ids and the
 * AppError ↔ gRPC status mapping, and clients with default deadlines that turn failures back into
 * AppErrors. Works with the ts-proto `outputServices=grpc-js` code in @subx/contracts.
 *
 * Across the wire an AppError travels as its catalogue gRPC status plus trailing metadata:
 * `app-error-code`, `app-error-message`, `app-error-reason`, `app-error-details` (JSON) and
 * `app-error-retry-after`. gRPC forbids non-ASCII in text metadata, so message, reason and details
 * are percent-encoded (encodeURIComponent) and decoded by `fromGrpcError`.
 */
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { AppError, Errors, isAppError, isErrorCode } from '@subx/errors';
import type { Logger } from 'pino';
import type { HealthRegistry } from './health.ts';
import { HealthClient, createHealthServer } from './grpc-health.ts';
import { observeGrpcCall } from './metrics/instruments.ts';
import type { ServingStatus } from './grpc-health.ts';
import { portInUse } from './startup-errors.ts';

export const REQUEST_ID_HEADER = 'x-request-id';
export const APP_ERROR_CODE = 'app-error-code';
export const APP_ERROR_MESSAGE = 'app-error-message';
export const APP_ERROR_REASON = 'app-error-reason';
export const APP_ERROR_DETAILS = 'app-error-details';
export const APP_ERROR_RETRY_AFTER = 'app-error-retry-after';

// ---------------------------------------------------------------------------------------------
// Types derived from ts-proto service definitions and clients

/** One unary method of a ts-proto `XServiceService` definition. */
// `any` defaults: a registry of heterogeneous methods must accept every request/response type.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface UnaryMethodDefinition<Req = any, Res = any> {
  path: string;
  requestStream: false;
  responseStream: false;
  requestSerialize(value: Req): Buffer;
  requestDeserialize(bytes: Buffer): Req;
  responseSerialize(value: Res): Buffer;
  responseDeserialize(bytes: Buffer): Res;
}

export type UnaryServiceDefinition = Record<string, UnaryMethodDefinition>;

type RequestOf<M> = M extends { requestDeserialize(bytes: Buffer): infer R } ? R : never;
type ResponseOf<M> = M extends { responseSerialize(value: infer R): Buffer } ? R : never;

export interface CallContext {
  requestId: string;
  /** Child logger with request_id and rpc. */
  logger: Logger;
  metadata: grpc.Metadata;
  /** The caller's deadline, if any: pass it on to downstream calls. */
  deadline: Date | undefined;
  /** Aborted when the caller cancels or its deadline passes. */
  signal: AbortSignal;
}

export type UnaryHandler<M> = (
  request: RequestOf<M>,
  ctx: CallContext,
) => Promise<ResponseOf<M>> | ResponseOf<M>;

export type ServiceImplementation<D> = { [K in keyof D]: UnaryHandler<D[K]> };

export interface ServiceRegistration {
  definition: UnaryServiceDefinition;
  implementation: Record<string, UnaryHandler<UnaryMethodDefinition>>;
}

/** Pairs a definition with its handlers so the handlers are type-checked against the contract. */
export function defineService<D extends UnaryServiceDefinition>(
  definition: D,
  implementation: ServiceImplementation<D>,
): ServiceRegistration {
  return { definition, implementation: implementation as ServiceRegistration['implementation'] };
}

/** The fully-qualified service name ('subx.comments.v1.CommentsService') from a definition. */
export function serviceNameOf(definition: UnaryServiceDefinition): string {
  const first = Object.values(definition)[0];
  if (!first) throw new Error('empty service definition');
  return first.path.split('/')[1] ?? '';
}

// ---------------------------------------------------------------------------------------------
// Error mapping

function jsonSafe(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

function firstString(metadata: grpc.Metadata, key: string): string | undefined {
  const value = metadata.get(key)[0];
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : value.toString('utf8');
}

function decoded(metadata: grpc.Metadata, key: string): string | undefined {
  const value = firstString(metadata, key);
  if (value === undefined) return undefined;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * Server side: any thrown value → a gRPC status with app-error metadata. Unknown errors become
 * INTERNAL with the fixed public message; the real error is logged with its stack.
 */
export function toGrpcError(err: unknown, logger: Logger): grpc.ServerErrorResponse {
  let app: AppError;
  if (isAppError(err)) {
    app = err;
    if (!app.isPublic) logger.error({ err, cause: app.cause }, 'internal error');
    else logger.info({ code: app.code, reason: app.reason }, 'request failed');
  } else {
    logger.error({ err }, 'unhandled error in gRPC handler');
    app = Errors.internal();
  }
  const message = app.isPublic ? app.message : Errors.internal().message;
  const metadata = new grpc.Metadata();
  metadata.set(APP_ERROR_CODE, app.code);
  metadata.set(APP_ERROR_MESSAGE, encodeURIComponent(message));
  if (app.reason !== undefined) metadata.set(APP_ERROR_REASON, encodeURIComponent(app.reason));
  if (app.details !== undefined && app.isPublic) {
    metadata.set(APP_ERROR_DETAILS, encodeURIComponent(jsonSafe(app.details)));
  }
  if (app.retryAfterSeconds !== undefined) metadata.set(APP_ERROR_RETRY_AFTER, String(app.retryAfterSeconds));
  return Object.assign(new Error(message), { code: app.grpcStatus, details: message, metadata });
}

function isServiceError(err: unknown): err is grpc.ServiceError {
  return err instanceof Error && typeof (err as { code?: unknown }).code === 'number' && 'metadata' in err;
}

/**
 * Client side: a failed call → AppError. With app-error metadata the original error is rebuilt
 * (code, message, reason, details); without it, transport failures (UNAVAILABLE,
 * DEADLINE_EXCEEDED) become SERVICE_UNAVAILABLE and anything else INTERNAL_ERROR.
 */
export function fromGrpcError(err: unknown, serviceLabel: string): AppError {
  if (isAppError(err)) return err;
  if (!isServiceError(err)) return Errors.internal(err);
  const code = firstString(err.metadata, APP_ERROR_CODE);
  if (isErrorCode(code)) {
    const message = decoded(err.metadata, APP_ERROR_MESSAGE) ?? err.details;
    const reason = decoded(err.metadata, APP_ERROR_REASON);
    const rawDetails = decoded(err.metadata, APP_ERROR_DETAILS);
    let details: Record<string, unknown> | undefined;
    if (rawDetails !== undefined) {
      try {
        const parsed: unknown = JSON.parse(rawDetails);
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
          details = parsed as Record<string, unknown>;
      } catch {
        details = undefined;
      }
    }
    const retryAfter = Number(firstString(err.metadata, APP_ERROR_RETRY_AFTER));
    return new AppError(code, message, {
      cause: err,
      ...(reason === undefined ? {} : { reason }),
      ...(details === undefined ? {} : { details }),
      ...(Number.isFinite(retryAfter) && retryAfter >= 0 ? { retryAfterSeconds: retryAfter } : {}),
    });
  }
  if (err.code === grpc.status.DEADLINE_EXCEEDED) {
    return new AppError('SERVICE_UNAVAILABLE', `The ${serviceLabel} service did not answer in time.`, {
      cause: err,
    });
  }
  if (err.code === grpc.status.UNAVAILABLE) return Errors.serviceUnavailable(serviceLabel, err);
  return Errors.internal(err);
}

// ---------------------------------------------------------------------------------------------
// Server

function wrapUnary(
  path: string,
  handler: UnaryHandler<UnaryMethodDefinition>,
  logger: Logger,
): grpc.handleUnaryCall<unknown, unknown> {
  return (call, callback) => {
    const requestId = firstString(call.metadata, REQUEST_ID_HEADER) || randomUUID();
    const log = logger.child({ request_id: requestId, rpc: path });
    const controller = new AbortController();
    call.on('cancelled', () => controller.abort(new Error('call cancelled by the client or its deadline')));
    const rawDeadline = call.getDeadline();
    const deadlineMs = rawDeadline instanceof Date ? rawDeadline.getTime() : rawDeadline;
    const ctx: CallContext = {
      requestId,
      logger: log,
      metadata: call.metadata,
      deadline: Number.isFinite(deadlineMs) ? new Date(deadlineMs) : undefined,
      signal: controller.signal,
    };
    const t0 = performance.now();
    Promise.resolve()
      .then(() => handler(call.request, ctx))
      .then(
        (response) => {
          const ms = performance.now() - t0;
          log.debug({ ms: Math.round(ms) }, 'rpc ok');
          observeGrpcCall('server', path, 'OK', ms / 1000);
          callback(null, response);
        },
        (err: unknown) => {
          const grpcError = toGrpcError(err, log);
          observeGrpcCall(
            'server',
            path,
            grpc.status[grpcError.code ?? grpc.status.UNKNOWN] ?? 'UNKNOWN',
            (performance.now() - t0) / 1000,
          );
          callback(grpcError);
        },
      );
  };
}

export interface GrpcServerHealthOptions {
  /** When given, every service (and '') is SERVING iff the registry is not 'down', re-evaluated every intervalMs. */
  registry?: HealthRegistry;
  /** Default 5000 ms. */
  intervalMs?: number;
}

let grpcLogsRouted = false;

/**
 * grpc-js writes its own diagnostics to stderr as plain text ("E No address added out of total 1
 * resolved"); route them into the service's JSON log instead. A failed bind is not logged here at
 * error level: it comes back to the caller as an error, and a busy port is reported once, by name
 * (PortInUseError). The first server's logger wins (grpc-js has one process-wide logger).
 */
function routeGrpcLogs(logger: Logger): void {
  if (grpcLogsRouted) return;
  grpcLogsRouted = true;
  const text = (args: unknown[]) =>
    args
      .map(String)
      .join(' ')
      .replace(/^[DIE] /, '');
  grpc.setLogger({
    debug: (...args: unknown[]) => logger.debug({ component: 'grpc-js' }, text(args)),
    info: (...args: unknown[]) => logger.info({ component: 'grpc-js' }, text(args)),
    error: (...args: unknown[]) => {
      const message = text(args);
      if (message.startsWith('No address added')) logger.debug({ component: 'grpc-js' }, message);
      else logger.error({ component: 'grpc-js' }, message);
    },
  });
}

export interface StartGrpcServerOptions {
  /** 0 = any free port (tests). */
  port: number;
  /** The variable that sets `port`, named when the port is busy (default GRPC_PORT). */
  portVariable?: string;
  /** Default '0.0.0.0' (containers); tests use '127.0.0.1'. */
  host?: string;
  services: readonly ServiceRegistration[];
  logger: Logger;
  health?: GrpcServerHealthOptions;
  serverOptions?: grpc.ServerOptions;
  /** TLS (net/grpc-tls.ts); default plaintext. */
  credentials?: grpc.ServerCredentials;
}

export interface GrpcServerHealth {
  /** `service` is a fully-qualified name, or '' for the whole server. */
  setServing(service: string, serving: boolean): void;
  setAllServing(serving: boolean): void;
  status(service: string): ServingStatus | undefined;
}

export interface StartedGrpcServer {
  /** The bound port (the real one when 0 was asked for). */
  port: number;
  server: grpc.Server;
  health: GrpcServerHealth;
  /**
   * Health → NOT_SERVING, then tryShutdown (in-flight calls finish, new ones are refused), then
   * forceShutdown if that takes longer than timeoutMs. Resolves true when graceful.
   */
  shutdown(timeoutMs?: number): Promise<boolean>;
}

export async function startGrpcServer(options: StartGrpcServerOptions): Promise<StartedGrpcServer> {
  const { logger } = options;
  const host = options.host ?? '0.0.0.0';
  const server = new grpc.Server(options.serverOptions);
  const serviceNames: string[] = [];

  for (const { definition, implementation } of options.services) {
    const handlers: grpc.UntypedServiceImplementation = {};
    for (const [method, def] of Object.entries(definition)) {
      if (def.requestStream || def.responseStream)
        throw new Error(`${def.path}: only unary methods are supported`);
      const handler = implementation[method];
      if (typeof handler !== 'function') throw new Error(`${def.path}: no handler for "${method}"`);
      handlers[method] = wrapUnary(def.path, handler, logger);
    }
    server.addService(definition as grpc.ServiceDefinition, handlers);
    serviceNames.push(serviceNameOf(definition));
  }

  const health = createHealthServer();
  health.addTo(server);
  const allNames = ['', ...serviceNames];
  let shuttingDown = false;
  const setAll = (status: ServingStatus) => {
    for (const name of allNames) health.set(name, status);
  };

  const bindAddress =
    host.includes(':') && !host.startsWith('[') ? `[${host}]:${options.port}` : `${host}:${options.port}`;
  routeGrpcLogs(logger);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(
      bindAddress,
      options.credentials ?? grpc.ServerCredentials.createInsecure(),
      (err, bound) =>
        err ? reject(portInUse(err, options.portVariable ?? 'GRPC_PORT', options.port)) : resolve(bound),
    );
  });

  let poll: NodeJS.Timeout | undefined;
  if (options.health?.registry) {
    const registry = options.health.registry;
    setAll('NOT_SERVING');
    const evaluate = async () => {
      const report = await registry.run();
      if (!shuttingDown) setAll(report.status === 'down' ? 'NOT_SERVING' : 'SERVING');
    };
    await evaluate();
    poll = setInterval(
      () => void evaluate().catch((err: unknown) => logger.error({ err }, 'health evaluation failed')),
      options.health.intervalMs ?? 5_000,
    );
    poll.unref();
  } else {
    setAll('SERVING');
  }
  logger.info({ host, port, services: serviceNames }, 'gRPC server listening');

  let shutdownPromise: Promise<boolean> | undefined;
  return {
    port,
    server,
    health: {
      setServing(service, serving) {
        if (!allNames.includes(service)) throw new Error(`unknown service "${service}"`);
        if (!shuttingDown) health.set(service, serving ? 'SERVING' : 'NOT_SERVING');
      },
      setAllServing(serving) {
        if (!shuttingDown) setAll(serving ? 'SERVING' : 'NOT_SERVING');
      },
      status: (service) => health.get(service),
    },
    shutdown(timeoutMs = 10_000) {
      if (shutdownPromise) return shutdownPromise;
      shuttingDown = true;
      clearInterval(poll);
      setAll('NOT_SERVING');
      health.endWatches();
      shutdownPromise = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => {
          logger.warn({ timeoutMs }, 'gRPC graceful shutdown timed out; forcing');
          server.forceShutdown();
          resolve(false);
        }, timeoutMs);
        server.tryShutdown((err) => {
          clearTimeout(timer);
          if (err) logger.warn({ err }, 'gRPC tryShutdown reported an error');
          resolve(!err);
        });
      });
      return shutdownPromise;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Client

type UnaryClientMethod = (
  request: any, // eslint-disable-line @typescript-eslint/no-explicit-any
  metadata: grpc.Metadata,
  options: Partial<grpc.CallOptions>,
  callback: (error: grpc.ServiceError | null, response: any) => void, // eslint-disable-line @typescript-eslint/no-explicit-any
) => grpc.ClientUnaryCall;

/** Names of the unary methods of a ts-proto client interface. */
export type UnaryMethodNames<C> = {
  [K in keyof C]-?: C[K] extends UnaryClientMethod ? K : never;
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
    ...options.channelOptions,
  });
  const serviceName = Ctor.serviceName ?? serviceNameOf(Ctor.service as unknown as UnaryServiceDefinition);
  clientDefaults.set(raw, {
    defaultDeadlineMs: options.defaultDeadlineMs ?? 5_000,
    label: options.label ?? labelOf(serviceName),
    logger: options.logger,
  });
  const methods: Record<string, unknown> = {};
  for (const name of Object.keys(Ctor.service)) {
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
        error ? (grpc.status[error.code] ?? 'UNKNOWN') : 'OK',
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

export type HealthState = 'SERVING' | 'NOT_SERVING' | 'UNKNOWN' | 'UNREACHABLE';

/**
 * grpc.health.v1 Check against `target`: an address, or an existing client (its channel is reused,
 * so the answer reflects the connection the caller actually uses). A service the server does not
 * know is 'UNKNOWN'; a server that cannot be reached in time is 'UNREACHABLE'.
 */
export function checkHealth(
  target: string | grpc.Client,
  service = '',
  deadlineMs = 2_000,
): Promise<HealthState> {
  const client =
    typeof target === 'string'
      ? new HealthClient(target, grpc.credentials.createInsecure())
      : new HealthClient('unused', grpc.credentials.createInsecure(), {
          channelOverride: target.getChannel(),
        });
  return new Promise<HealthState>((resolve) => {
    client.check(
      { service },
      new grpc.Metadata(),
      { deadline: Date.now() + deadlineMs },
      (error, response) => {
        if (typeof target === 'string') client.close();
        if (!error) {
          resolve(
            response.status === 'SERVING' || response.status === 'NOT_SERVING' ? response.status : 'UNKNOWN',
          );
        } else if (error.code === grpc.status.UNAVAILABLE || error.code === grpc.status.DEADLINE_EXCEEDED) {
          resolve('UNREACHABLE');
        } else {
          resolve('UNKNOWN');
        }
      },
    );
  });
}

export { HealthClient, HealthService, HealthServiceName, createHealthServer } from './grpc-health.ts';
export type { HealthServer, ServingStatus } from './grpc-health.ts';
