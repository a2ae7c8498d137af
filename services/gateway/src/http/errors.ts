/**
 * One error body for every failure (docs/decisions.md "Errors"): fastify's own errors (body limit,
 * media type, malformed JSON, validation) are translated into catalogue codes; anything unknown
 * becomes INTERNAL_ERROR and its message stays in the log, except a connection that failed, which
 * is the upstream's retryable UPSTREAM_ERROR or UPSTREAM_TIMEOUT.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, Errors, isAppError, networkFailureError, toPublicErrorBody } from '@subx/errors';
import { rateLimitOf } from '../access/rate-limit.ts';
import { WWW_AUTHENTICATE } from './api-key-header.ts';
import { setRateLimitHeaders } from './rate-limit-headers.ts';
import { validationToAppError } from './validation.ts';

export function toAppError(err: unknown, request: FastifyRequest, bodyLimit: number): AppError {
  if (isAppError(err)) return err;
  const fe = err as Partial<FastifyError> & { validationContext?: string };
  if (Array.isArray(fe.validation)) {
    return validationToAppError(fe.validation as never, fe.validationContext, {
      body: request.body,
      query: request.query,
    });
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than ${bodyLimit} bytes.`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return new AppError(
        'UNSUPPORTED_MEDIA_TYPE',
        'The request body must be JSON (Content-Type: application/json).',
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return Errors.invalidRequest('The request body is empty; send a JSON object.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return Errors.invalidRequest('The request body is not valid JSON.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return Errors.invalidRequest('The Content-Length header does not match the body.');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      // The router's bound on one path parameter (100 characters); no id of the API comes near it.
      return new AppError('URI_TOO_LONG', 'A path parameter is longer than 100 characters.');
  }
  // Other client errors from fastify/light-my-request (bad URL encoding, JSON syntax in older paths).
  if (
    err instanceof SyntaxError ||
    (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500)
  ) {
    return Errors.invalidRequest(
      err instanceof SyntaxError ? 'The request body is not valid JSON.' : 'Malformed request.',
    );
  }
  return networkFailureError(err) ?? Errors.internal(err);
}

export function sendError(request: FastifyRequest, reply: FastifyReply, appError: AppError): FastifyReply {
  const state = rateLimitOf(appError);
  if (state) setRateLimitHeaders(reply, state);
  if (appError.status === 401) reply.header('www-authenticate', WWW_AUTHENTICATE);
  if (appError.status === 429 || appError.retryAfterSeconds !== undefined) {
    reply.header('retry-after', String(Math.max(1, Math.ceil(appError.retryAfterSeconds ?? 60))));
  }
  return reply
    .code(appError.status)
    .type('application/json; charset=utf-8')
    .send(toPublicErrorBody(appError, request.id));
}

export function createErrorHandler(bodyLimit: number) {
  return function errorHandler(err: unknown, request: FastifyRequest, reply: FastifyReply) {
    const appError = toAppError(err, request, bodyLimit);
    if (appError.status >= 500) {
      // The AppError with its cause chain (the ServiceError or exception behind it), stack included.
      request.log.error({ err: appError, code: appError.code }, 'request failed');
    } else {
      request.log.debug({ code: appError.code, message: appError.message }, 'request rejected');
    }
    return sendError(request, reply, appError);
  };
}
