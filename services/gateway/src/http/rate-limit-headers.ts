import type { FastifyReply } from 'fastify';
import type { RateLimitState } from '@subx/credits';
import { rateLimitHeaders } from '../access/rate-limit.ts';

/** X-RateLimit-Limit / -Remaining / -Reset (ISO 8601); none for unlimited tiers. */
export function setRateLimitHeaders(reply: FastifyReply, state: RateLimitState): void {
  const headers = rateLimitHeaders(state);
  for (const name in headers) reply.header(name, headers[name]);
}
