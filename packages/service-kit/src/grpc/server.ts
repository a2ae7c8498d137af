/** Server start/shutdown with grpc.health.v1, and async handlers with request ids and metrics. */
import * as grpc from '@grpc/grpc-js';
import type { Logger } from '@subx/ports';
// pino's own type: each call's logger is a child of this one, made only when the call logs.
import type { Logger as PinoLogger } from 'pino';
import type { HealthRegistry } from '../health.ts';
import { observeGrpcCall } from '../metrics/grpc.ts';
import { portInUse } from '../startup-errors.ts';
import { callContext } from './call-context.ts';
import { grpcStatusName, toGrpcError } from './errors.ts';
import { createHealthServer } from './health-service.ts';
import type { ServingStatus } from './health-service.ts';
import { serviceNameOf } from './service-definition.ts';
import type {
  BidiStreamHandler,
  BidiStreamMethodDefinition,
  CallContext,
  ServerStreamHandler,
  ServerStreamMethodDefinition,
  ServiceRegistration,
  UnaryHandler,
  UnaryMethodDefinition,
} from './service-definition.ts';

/** A call that ended without an error: the debug line (its logger made only then) and the metrics. */
function observeOk(ctx: CallContext, path: string, logger: PinoLogger, t0: number, code = 'OK'): void {
  const ms = performance.now() - t0;
  if (logger.isLevelEnabled('debug')) ctx.logger.debug({ ms: Math.round(ms) }, 'rpc ok');
  observeGrpcCall('server', path, code, ms / 1000);
}

/** A call whose handler threw: the status (and app-error metadata) to send, counted in the metrics. */
function observeFailure(ctx: CallContext, path: string, t0: number, err: unknown): grpc.ServerErrorResponse {
  const grpcError = toGrpcError(err, ctx.logger);
  observeGrpcCall('server', path, grpcStatusName(grpcError.code), (performance.now() - t0) / 1000);
  return grpcError;
}

function wrapUnary(
  path: string,
  handler: UnaryHandler<UnaryMethodDefinition>,
  logger: PinoLogger,
): grpc.handleUnaryCall<unknown, unknown> {
  return (call, callback) => {
    const ctx = callContext(call, path, logger);
    const t0 = performance.now();
    Promise.resolve()
      .then(() => handler(call.request, ctx))
      .then(
        (response) => {
          observeOk(ctx, path, logger, t0);
          callback(null, response);
        },
        (err: unknown) => callback(observeFailure(ctx, path, t0, err)),
      );
  };
}

/**
 * Runs a streaming call's handler with `send` (dropped once the call is cancelled or ended): OK
 * when it resolves, its error's status (and app-error metadata) when it rejects. One metrics
 * observation per call.
 */
function runStream(
  call: grpc.ServerWritableStream<unknown, unknown> | grpc.ServerDuplexStream<unknown, unknown>,
  path: string,
  logger: PinoLogger,
  run: (
    ctx: CallContext,
    send: (response: unknown) => void,
    drained: () => Promise<void>,
  ) => Promise<void> | void,
): void {
  const ctx = callContext(call, path, logger);
  // What a handler has in flight is capped (batch.ts: maxItems, maxInFlight), so grpc-js's write
  // buffer is bounded without waiting for 'drain'.
  const send = (response: unknown) => {
    if (!call.cancelled && call.writable) call.write(response);
  };
  const drained = () =>
    new Promise<void>((resolve) => {
      if (call.cancelled || !call.writable || !call.writableNeedDrain) return resolve();
      const done = () => {
        call.off('drain', done);
        call.off('close', done);
        call.off('cancelled', done);
        resolve();
      };
      call.once('drain', done);
      call.once('close', done);
      call.once('cancelled', done);
    });
  const t0 = performance.now();
  Promise.resolve()
    .then(() => run(ctx, send, drained))
    .then(
      () => {
        observeOk(ctx, path, logger, t0, call.cancelled ? 'CANCELLED' : 'OK');
        if (call.writable) call.end();
      },
      (err: unknown) => {
        const grpcError = observeFailure(ctx, path, t0, err);
        // grpc-js's server stream turns an 'error' event into the call's status and trailers.
        if (call.writable) call.emit('error', grpcError);
      },
    );
}

/** A server-streaming call with the semantics of wrapUnary: the handler sends while it runs. */
function wrapServerStream(
  path: string,
  handler: ServerStreamHandler<ServerStreamMethodDefinition>,
  logger: PinoLogger,
): grpc.handleServerStreamingCall<unknown, unknown> {
  return (call) =>
    runStream(call, path, logger, (ctx, send, drained) => handler(call.request, ctx, send, drained));
}

/** A bidirectional call: the handler reads the client's messages (until it half-closes) and sends. */
function wrapBidiStream(
  path: string,
  handler: BidiStreamHandler<BidiStreamMethodDefinition>,
  logger: PinoLogger,
): grpc.handleBidiStreamingCall<unknown, unknown> {
  return (call) => {
    // Not the stream's own iterator: that destroys the call when the loop ends (the client's
    // half-close, or the handler's throw), before the answers still due and the status are sent.
    const requests: AsyncIterable<unknown> = {
      [Symbol.asyncIterator]: () => call.iterator({ destroyOnReturn: false }),
    };
    runStream(call, path, logger, (ctx, send) => handler(requests, ctx, send));
  };
}

export interface GrpcServerHealthOptions {
  /** When given, every service (and '') is SERVING iff the registry is not 'down', re-evaluated every intervalMs. */
  registry?: HealthRegistry;
  /** Default 5000 ms. */
  intervalMs?: number;
  /**
   * Health names of their own beside the services' (e.g. `subx.platform`: whether what the service
   * depends on outside answers), SERVING at start and set with `health.setServing(name, …)`.
   */
  names?: readonly string[];
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
  logger: PinoLogger;
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
      // A definition from outside the types (a hand-written one) may still say client streaming.
      if (def.requestStream && !(def as { responseStream: boolean }).responseStream)
        throw new Error(`${def.path}: client-streaming methods are not supported`);
      const handler = implementation[method];
      if (typeof handler !== 'function') throw new Error(`${def.path}: no handler for "${method}"`);
      handlers[method] = def.requestStream
        ? wrapBidiStream(def.path, handler as BidiStreamHandler<BidiStreamMethodDefinition>, logger)
        : def.responseStream
          ? wrapServerStream(def.path, handler as ServerStreamHandler<ServerStreamMethodDefinition>, logger)
          : wrapUnary(def.path, handler as UnaryHandler<UnaryMethodDefinition>, logger);
    }
    server.addService(definition as grpc.ServiceDefinition, handlers);
    serviceNames.push(serviceNameOf(definition));
  }

  const health = createHealthServer();
  health.addTo(server);
  const allNames = ['', ...serviceNames, ...(options.health?.names ?? [])];
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
