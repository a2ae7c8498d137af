/**
 * Jobs: the account's bulk jobs, newest first, from the gateway's admin API a page at a time; the
 * gateway's opaque `next_cursor` travels in this page's query string.
 */
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../gateway/client.ts';
import { jobsPage } from '../views/job-pages.ts';
import { signedInUser } from '../auth/guards.ts';
import type { DashboardServices } from '../services.ts';

const JOBS_PER_PAGE = 20;
const MAX_CURSOR_LENGTH = 512;

export default async function jobRoutes(app: FastifyInstance, s: DashboardServices) {
  const noAccountYet = s.guards.confirmed(async (_request, reply) =>
    reply.page((ctx) => jobsPage(ctx, null)),
  );

  app.get<{ Querystring: { cursor?: string } }>(
    '/jobs',
    {
      config: { permission: 'jobs:read' },
      schema: {
        querystring: {
          type: 'object',
          properties: { cursor: { type: 'string', minLength: 1, maxLength: MAX_CURSOR_LENGTH } },
        },
      },
      preHandler: noAccountYet,
    },
    async (request, reply) => {
      const accountId = signedInUser(request).account_id;
      if (!accountId) return reply.page((ctx) => jobsPage(ctx, null));
      const { cursor } = request.query;
      try {
        const page = await request.gateway.jobs(accountId, {
          limit: JOBS_PER_PAGE,
          ...(cursor ? { cursor } : {}),
        });
        return await reply.page((ctx) => jobsPage(ctx, page));
      } catch (error) {
        // A cursor the gateway does not take (edited, or from an older page format): start over.
        if (error instanceof GatewayError && error.status === 400 && cursor) {
          const text = 'That page link is no longer valid; here are your latest jobs.';
          const page = await request.gateway.jobs(accountId, { limit: JOBS_PER_PAGE });
          return reply.page((ctx) => jobsPage(ctx, page, { kind: 'error', text }), 400);
        }
        // The account exists (it is signed in), so a 404 is a gateway without the jobs listing:
        // one older than this dashboard, during a rolling deploy. Say so instead of "not answering".
        if (error instanceof GatewayError && error.status === 404) {
          const text =
            'Jobs cannot be listed right now: the API does not offer the list yet. Try again later.';
          return reply.page((ctx) => jobsPage(ctx, null, { kind: 'error', text }), 502);
        }
        throw error;
      }
    },
  );
}
