/**
 * The audit log: the account's events from the gateway's admin API, newest first, a page at a time
 * (the gateway's opaque `next_cursor` in this page's query string), for the roles with
 * `audit:read` (owners and admins). A person named as an actor is shown by e-mail while they are a
 * member of this workspace; anyone else (a former member) stays an id.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../gateway/client.ts';
import { signedInUser } from '../auth/guards.ts';
import type { DashboardServices } from '../services.ts';
import { auditLogPage } from '../views/audit-page.ts';

const EVENTS_PER_PAGE = 50;
const MAX_CURSOR_LENGTH = 512;

export default async function auditRoutes(app: FastifyInstance, s: DashboardServices) {
  const noAccountYet = s.guards.confirmed(async (_request, reply) =>
    reply.page((ctx) => auditLogPage(ctx, null)),
  );

  /** E-mails of the workspace's members, by their dashboard user id. */
  async function membersOf(request: FastifyRequest, accountId: string): Promise<Map<string, string>> {
    const members = await request.gateway.members(accountId);
    return new Map(members.map((m) => [m.member_id, m.email]));
  }

  const show = async (request: FastifyRequest, accountId: string, cursor?: string) => {
    const page = await request.gateway.auditPage(accountId, {
      limit: EVENTS_PER_PAGE,
      ...(cursor ? { cursor } : {}),
    });
    return { page, members: await membersOf(request, accountId), older: Boolean(cursor) };
  };

  app.get<{ Querystring: { cursor?: string } }>(
    '/audit',
    {
      config: { permission: 'audit:read' },
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
      if (!accountId) return reply.page((ctx) => auditLogPage(ctx, null));
      const { cursor } = request.query;
      try {
        const view = await show(request, accountId, cursor);
        return await reply.page((ctx) => auditLogPage(ctx, view));
      } catch (error) {
        // A cursor the gateway does not take (edited, or from an older format): start over.
        if (error instanceof GatewayError && error.status === 400 && cursor) {
          const text = 'That page link is no longer valid; here are the latest events.';
          const view = await show(request, accountId);
          return reply.page((ctx) => auditLogPage(ctx, view, { kind: 'error', text }), 400);
        }
        // The account exists (it is signed in): a 404 is a gateway older than this dashboard, a
        // 503 one whose audit log is not enabled.
        if (error instanceof GatewayError && (error.status === 404 || error.status === 503)) {
          const text = 'The audit log cannot be shown right now: the API does not offer it. Try again later.';
          return reply.page((ctx) => auditLogPage(ctx, null, { kind: 'error', text }), 502);
        }
        throw error;
      }
    },
  );
}
