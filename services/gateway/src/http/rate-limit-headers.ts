import type { FastifyReply } from 'fastify';
import type { RateLimitState } from '../access/types.ts';
import { rateLimitHeaders } from '../access/rate-limit.ts';

/** X-RateLimit-Limit / -Remaining / -Reset (ISO 8601); none for unlimited tiers. */
export function setRateLimitHeaders(reply: FastifyReply, state: RateLimitState): void {
  for (const [name, value] of Object.entries(rateLimitHeaders(state))) reply.header(name, value);
}
