/** The handler's context of one incoming call (server.ts), and the logger it derives from (batch.ts). */
import { randomUUID } from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from '@subx/ports';
// pino's own type: each call's and each batch item's logger is a child of the server's.
import type { Logger as PinoLogger } from 'pino';
import { REQUEST_ID_HEADER, firstString } from './errors.ts';
import type { CallContext } from './service-definition.ts';

const serviceLoggers = new WeakMap<CallContext, PinoLogger>();

/** The service's logger behind `ctx.logger` (batch items bind their own request id to it). */
export function serviceLoggerOf(ctx: CallContext): PinoLogger | undefined {
  return serviceLoggers.get(ctx);
}

/**
 * Request id (x-request-id, else a new one), deadline, cancellation as a signal, and a logger with
 * request_id and rpc that is made on first use: a pino child with redaction is a measurable cost
 * per call, and most calls log nothing.
 */
export function callContext(
  call:
    | grpc.ServerUnaryCall<unknown, unknown>
    | grpc.ServerWritableStream<unknown, unknown>
    | grpc.ServerDuplexStream<unknown, unknown>,
  path: string,
  logger: PinoLogger,
): CallContext {
  const requestId = firstString(call.metadata, REQUEST_ID_HEADER) || randomUUID();
  const controller = new AbortController();
  // (the union's `on` overloads do not unify; every kind of call emits 'cancelled')
  (call as grpc.ServerUnaryCall<unknown, unknown>).on('cancelled', () =>
    controller.abort(new Error('call cancelled by the client or its deadline')),
  );
  const rawDeadline = call.getDeadline();
  const deadlineMs = rawDeadline instanceof Date ? rawDeadline.getTime() : rawDeadline;
  let child: Logger | undefined;
  const ctx: CallContext = {
    requestId,
    get logger() {
      child ??= logger.child({ request_id: requestId, rpc: path });
      return child;
    },
    metadata: call.metadata,
    deadline: Number.isFinite(deadlineMs) ? new Date(deadlineMs) : undefined,
    signal: controller.signal,
  };
  serviceLoggers.set(ctx, logger);
  return ctx;
}
