/**
 * Watches: the account's watches from the gateway's admin API, and Delete (CSRF-checked like every
 * POST, behind a ticked confirmation box), which stops the watch; the jobs it started run on.
 * Resume runs a watch paused after a compromise again.
 */
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../gateway/client.ts';
import { field, formSchema } from '../views/forms.ts';
import { signedInUser } from '../auth/guards.ts';
import type { DashboardServices } from '../services.ts';
import type { Notice } from '../views/pages.ts';
import { watchesPage } from '../views/watch-pages.ts';

const confirmForm = formSchema('confirm');

export default async function watchRoutes(app: FastifyInstance, s: DashboardServices) {
  const noAccountYet = s.guards.confirmed(async (_request, reply) =>
    reply.page((ctx) => watchesPage(ctx, null)),
  );

  app.get(
    '/watches',
    { config: { permission: 'jobs:read' }, preHandler: noAccountYet },
    async (request, reply) => {
      const accountId = signedInUser(request).account_id;
      if (!accountId) return reply.page((ctx) => watchesPage(ctx, null));
      try {
        const list = await request.gateway.watches(accountId);
        return await reply.page((ctx) => watchesPage(ctx, list));
      } catch (error) {
        // The account exists (it is signed in): a 404 is a gateway older than this dashboard.
        if (error instanceof GatewayError && error.status === 404) {
          const text =
            'Watches cannot be listed right now: the API does not offer the list yet. Try again later.';
          return reply.page((ctx) => watchesPage(ctx, null, { kind: 'error', text }), 502);
        }
        throw error;
      }
    },
  );

  const watchParams = {
    type: 'object',
    properties: { watch_id: { type: 'string', minLength: 1, maxLength: 64 } },
  } as const;
  const backToList = s.guards.confirmed(async (_request, reply) => reply.redirect('/watches', 303));

  app.post<{ Params: { watch_id: string } }>(
    '/watches/:watch_id/resume',
    { config: { permission: 'jobs:manage' }, schema: { params: watchParams }, preHandler: backToList },
    async (request, reply) => {
      const accountId = signedInUser(request).account_id;
      if (!accountId) return reply.redirect('/watches', 303);
      const watchId = request.params.watch_id;
      let notice: Notice = { kind: 'ok', text: `Resumed watch ${watchId}: its next run is due now.` };
      let status = 200;
      try {
        await request.gateway.resumeWatch(accountId, watchId);
      } catch (error) {
        if (!(error instanceof GatewayError && error.status === 404)) throw error;
        notice = { kind: 'error', text: `No watch ${watchId} exists for this account.` };
        status = 404;
      }
      const list = await request.gateway.watches(accountId);
      return reply.page((ctx) => watchesPage(ctx, list, notice), status);
    },
  );

  app.post<{ Params: { watch_id: string } }>(
    '/watches/:watch_id/delete',
    {
      config: { permission: 'jobs:manage' },
      schema: {
        body: confirmForm,
        params: watchParams,
      },
      preHandler: backToList,
    },
    async (request, reply) => {
      const accountId = signedInUser(request).account_id;
      if (!accountId) return reply.redirect('/watches', 303);
      const watchId = request.params.watch_id;
      let notice: Notice;
      let status = 200;
      if (field(request.body, 'confirm') !== 'yes') {
        notice = { kind: 'error', text: 'Tick the box to confirm.' };
        status = 400;
      } else {
        try {
          await request.gateway.deleteWatch(accountId, watchId);
          notice = { kind: 'ok', text: `Deleted watch ${watchId}. The jobs it started run on.` };
        } catch (error) {
          if (!(error instanceof GatewayError && error.status === 404)) throw error;
          notice = { kind: 'error', text: `No watch ${watchId} exists for this account.` };
          status = 404;
        }
      }
      const list = await request.gateway.watches(accountId);
      return reply.page((ctx) => watchesPage(ctx, list, notice), status);
    },
  );
}
