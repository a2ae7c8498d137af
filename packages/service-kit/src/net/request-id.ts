/**
 * Request ids of the HTTP services: an incoming X-Request-Id is kept when it looks like an id (no
 * injection into logs or headers), otherwise a new one is made. The dashboard passes its id on to
 * the gateway's admin API, whose listener keeps it, so one id runs through both services' logs.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{8,128}$/;

/** fastify's `genReqId`: the caller's X-Request-Id when it is a plausible id, else `req_<uuid>`. */
export function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID_PATTERN.test(incoming) ? incoming : `req_${randomUUID()}`;
}
