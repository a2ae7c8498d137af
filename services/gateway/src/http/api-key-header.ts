/**
 * Where a request carries its API key: `X-API-Key: <key>`, or `Authorization: Bearer <key>` (what
 * OpenAPI generators and MCP clients send by default; docs/api.md "Authentication and keys"). One reader for
 * every authenticated route and the MCP endpoint, so there is one auth code path.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** RFC 6750 §2.1: the scheme is case-insensitive, then one or more spaces, then the token. */
const BEARER = /^Bearer +(\S+) *$/i;

/**
 * The key of the request, or undefined when it has none. X-API-Key wins when both are sent (the
 * self-service admin's delegated calls set it); a malformed Authorization header is no key.
 */
export function apiKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const header = headers['x-api-key'];
  if (typeof header === 'string') return header;
  const authorization = headers.authorization;
  if (typeof authorization !== 'string') return undefined;
  return BEARER.exec(authorization)?.[1];
}

/** The WWW-Authenticate challenge of every 401 (RFC 9110 §11.6.1 requires one). */
export const WWW_AUTHENTICATE = 'Bearer realm="subx"';
