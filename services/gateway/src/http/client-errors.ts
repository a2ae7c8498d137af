/**
 * Requests Node's HTTP parser rejects before fastify sees them (an oversized URL or header block,
 * an invalid Content-Length, a NUL or other forbidden byte in a header, a method token that is not
 * a method, plain garbage) arrive as the server's `clientError` event with a bare socket. fastify's
 * default handler answers those with its own body (`{"error":"Bad Request","message":"Client
 * Error","statusCode":400}`); this one writes the documented error shape instead, with an
 * `X-Request-Id` that is also logged, and closes the connection (the parser state is lost).
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { AppError, Errors, toPublicErrorBody } from '@subx/errors';
import type { Logger } from '@subx/ports';

/** Longest request target we read (fastify sees up to Node's 16 KB header limit; past 8 KB is 414). */
export const MAX_URL_LENGTH = 8_192;

/** What llhttp attaches to a parse error (`rawPacket` is the unparsed input, when there is one). */
interface ParserError extends Error {
  code?: string;
  rawPacket?: Buffer;
}

/** The request line is the bytes before the first CRLF; no CRLF in the packet means it never ended. */
function requestLineTooLong(raw: Buffer | undefined): boolean {
  if (!raw) return false;
  const end = raw.indexOf('\r\n');
  return end === -1 ? raw.length > MAX_URL_LENGTH : end > MAX_URL_LENGTH;
}

// RFC 9110 token, a space, a request target, a space, an HTTP version.
const REQUEST_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ [^\s]+ HTTP\/\d\.\d\r?\n/;

function clientErrorToAppError(err: ParserError): AppError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return requestLineTooLong(err.rawPacket)
        ? new AppError('URI_TOO_LONG', `The request URL is longer than ${MAX_URL_LENGTH} bytes.`)
        : new AppError('HEADERS_TOO_LARGE', 'The request headers are too large (16 KB in total at most).');
    case 'HPE_INVALID_METHOD':
      // A well-formed request line with an unknown method is 501; anything else is not HTTP at all.
      if (!REQUEST_LINE.test(err.rawPacket?.toString('latin1') ?? '')) {
        return Errors.invalidRequest('The request is not valid HTTP/1.1.');
      }
      return new AppError(
        'METHOD_NOT_IMPLEMENTED',
        'The HTTP method is not one this server knows; the API uses GET, HEAD and POST.',
      );
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return Errors.invalidRequest(
        'The Content-Length header is not valid (one decimal length, no body on GET).',
      );
    case 'HPE_INVALID_HEADER_TOKEN':
      return Errors.invalidRequest(
        'A request header contains a character HTTP does not allow (such as NUL or a control character).',
      );
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return Errors.invalidRequest('The Transfer-Encoding header is not valid.');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError('REQUEST_TIMEOUT', 'The request was not received completely in time.');
    default:
      return Errors.invalidRequest('The request is not valid HTTP/1.1.');
  }
}

/** One HTTP/1.1 response in the documented error shape, as bytes for a raw socket. */
function rawErrorResponse(appError: AppError, requestId: string): string {
  const body = JSON.stringify(toPublicErrorBody(appError, requestId));
  return [
    `HTTP/1.1 ${appError.status} ${STATUS_CODES[appError.status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    'Cache-Control: no-store',
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

export function createClientErrorHandler(getLogger: () => Logger) {
  return function clientErrorHandler(error: Error, socket: Socket): void {
    const err = error as ParserError;
    // A reset connection has nobody to answer (https://nodejs.org/api/http.html#event-clienterror).
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const appError = clientErrorToAppError(err);
    const requestId = `req_${randomUUID()}`;
    // The access line of a request that never became one (same fields as http/access-log.ts).
    getLogger().info(
      {
        request_id: requestId,
        method: null,
        route: null,
        status: appError.status,
        account_id: null,
        code: appError.code,
        parser_error: err.code,
      },
      'request',
    );
    if (socket.writable) socket.end(rawErrorResponse(appError, requestId));
    socket.destroySoon();
  };
}
