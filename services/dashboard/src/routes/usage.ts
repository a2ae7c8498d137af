/** Usage: today's requests against the daily limit, the balance, and 30 days of requests and credits. */
import type { FastifyInstance } from 'fastify';
import { usagePage } from '../views/pages.ts';
import { signedInUser } from '../auth/guards.ts';
import type { DashboardServices } from '../services.ts';

const DAY_MS = 86_400_000;
const DAYS_SHOWN = 30;

export default async function usageRoutes(app: FastifyInstance, s: DashboardServices) {
  const noAccountYet = s.guards.confirmed(async (_request, reply) =>
    reply.page((ctx) => usagePage(ctx, null)),
  );
  app.get(
    '/usage',
    { config: { permission: 'usage:read' }, preHandler: noAccountYet },
    async (request, reply) => {
      const accountId = signedInUser(request).account_id;
      if (!accountId) return reply.page((ctx) => usagePage(ctx, null));
      const today = new Date(s.now()).toISOString().slice(0, 10);
      const from = new Date(Date.parse(today) - (DAYS_SHOWN - 1) * DAY_MS).toISOString().slice(0, 10);
      const [limits, usage] = await Promise.all([
        request.gateway.limits(accountId),
        request.gateway.usage(accountId, from, today),
      ]);
      return reply.page((ctx) => usagePage(ctx, { limits, usage }));
    },
  );
}
