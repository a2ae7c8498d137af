/**
 * The fastify options both gateway listeners share (the public API in app.ts, the admin API in
 * admin/listener.ts): the same bounds on receiving, the same request ids and one access line per
 * request. Each adds what is its own (trust of proxies, error handlers).
 */
import { LogController } from 'fastify';
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import { Errors } from '@subx/errors';
import type { Logger } from '@subx/ports';
import { requestIdOf } from '@subx/service-kit';
import type { Config } from '../config.ts';
import { createClientErrorHandler } from './client-errors.ts';
import { sendError, toAppError } from './errors.ts';
import { lazyChildLoggerFactory } from './request-logger.ts';

export type ListenerConfig = Pick<
  Config,
  'BODY_LIMIT_BYTES' | 'REQUEST_RECEIVE_TIMEOUT_MS' | 'CONNECTION_IDLE_TIMEOUT_MS'
>;

export function listenerOptions(config: ListenerConfig, logger: FastifyBaseLogger | undefined) {
  return {
    ...(logger ? { loggerInstance: logger } : { logger: false }),
    bodyLimit: config.BODY_LIMIT_BYTES,
    // Every wait has a bound (README, "When a dependency misbehaves"): headers + body must arrive within
    // requestTimeout; idle keep-alive sockets close after keepAliveTimeout. The response side is
    // bounded by the operations' own deadlines (gRPC deadlines, batch/playlist budgets).
    requestTimeout: config.REQUEST_RECEIVE_TIMEOUT_MS,
    keepAliveTimeout: config.CONNECTION_IDLE_TIMEOUT_MS,
    // the one rule of every HTTP service (service-kit), so the dashboard's id runs through here too
    genReqId: requestIdOf,
    requestIdHeader: false as const,
    // One field name for the request id across the system (gRPC handlers log `request_id` too);
    // fastify's two lines per request are replaced by one access line (http/access-log.ts).
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    // request.log becomes a pino child only when something logs through it (request-logger.ts).
    ...(logger ? { childLoggerFactory: lazyChildLoggerFactory } : {}),
    // HEAD would run (and count) authenticated GETs; without it HEAD is a 405 like any other method.
    exposeHeadRoutes: false,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true },
  } satisfies FastifyServerOptions & { loggerInstance?: FastifyBaseLogger };
}

/**
 * Errors raised before a route runs, in the documented shape with an `X-Request-Id` on both
 * listeners: what the HTTP parser rejects (client-errors.ts), and the router's own refusals (a
 * path that is not valid percent-encoding, a path parameter past the router's length bound).
 */
export function documentedFrameworkErrors(config: ListenerConfig, log: () => Logger) {
  return {
    clientErrorHandler: createClientErrorHandler(log),
    frameworkErrors: ((error, request, reply) => {
      reply.header('x-request-id', request.id);
      const appError =
        error.code === 'FST_ERR_BAD_URL'
          ? Errors.invalidRequest('The request path is not valid percent-encoding.')
          : toAppError(error, request, config.BODY_LIMIT_BYTES);
      return sendError(request, reply, appError);
    }) satisfies NonNullable<FastifyServerOptions['frameworkErrors']>,
  };
}
