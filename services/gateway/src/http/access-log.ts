/**
 * One access-log line per request (fastify's own "incoming request" / "request completed" pair is
 * off): request id, method, route pattern, the URL with anything key-shaped redacted, status,
 * duration and the account id once the key was admitted. The API key itself is never logged: it
 * travels in a header the logger censors, and a key pasted into a URL (`?url=sxk_v1_...`, a path)
 * becomes `sxk_v1_[redacted]`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

// The key prefix, possibly percent-encoded (`sxk%5Fv1%5F`), then whatever follows it.
const KEY_SHAPED = /sxk(?:_|%5f)v1(?:_|%5f)[A-Za-z0-9%]*/gi;

function redactKeys(text: string): string {
  return text.replace(KEY_SHAPED, 'sxk_v1_[redacted]');
}

export function logAccess(request: FastifyRequest, reply: FastifyReply): void {
  const status = reply.statusCode;
  const level = status >= 500 ? 'error' : 'info';
  const log = request.server.log;
  // Below the configured level (npm start runs at warn) the line would be dropped: not built.
  // (pino has isLevelEnabled; fastify's stand-in logger, without a logger, has not.)
  if ((log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.(level) === false) return;
  const fields = {
    request_id: request.id,
    method: request.method,
    // The route pattern (`/admin/v1/accounts/:id`), null when no route matched.
    route: request.routeOptions.url ?? null,
    url: redactKeys(request.url.slice(0, 2_048)),
    status,
    duration_ms: Math.round(reply.elapsedTime * 10) / 10,
    account_id: request.admission?.account.id ?? null,
  };
  // The root logger with the request id as a field: the same line as through request.log, without
  // making a per-request child for it (request-logger.ts).
  log[level](fields, 'request');
}
