/**
 * Webhooks: the account's signing secret (from the gateway's admin API, which creates it on first
 * need), shown behind a details element, and Rotate (CSRF-checked like every POST, behind a ticked
 * confirmation box): the new secret signs from now on, the previous one alongside it for 24 hours.
 */
import type { FastifyInstance } from 'fastify';
import { field, formSchema } from '../views/forms.ts';
import { webhooksPage } from '../views/job-pages.ts';
import { signedInUser } from '../auth/guards.ts';
import type { DashboardServices } from '../services.ts';

const confirmForm = formSchema('confirm');

export default async function webhookRoutes(app: FastifyInstance, s: DashboardServices) {
  const noAccountYet = s.guards.confirmed(async (_request, reply) =>
    reply.page((ctx) => webhooksPage(ctx, null)),
  );

  app.get(
    '/webhooks',
    { config: { permission: 'webhooks:manage' }, preHandler: noAccountYet },
    async (request, reply) => {
      const accountId = signedInUser(request).account_id;
      if (!accountId) return reply.page((ctx) => webhooksPage(ctx, null));
      const secret = await request.gateway.webhookSecret(accountId);
      return reply.page((ctx) => webhooksPage(ctx, secret));
    },
  );

  app.post(
    '/webhooks/rotate',
    {
      config: { permission: 'webhooks:manage' },
      schema: { body: confirmForm },
      preHandler: s.guards.confirmed(async (_request, reply) => reply.redirect('/webhooks', 303)),
    },
    async (request, reply) => {
      const accountId = signedInUser(request).account_id;
      if (!accountId) return reply.redirect('/webhooks', 303);
      if (field(request.body, 'confirm') !== 'yes') {
        const secret = await request.gateway.webhookSecret(accountId);
        return reply.page(
          (ctx) => webhooksPage(ctx, secret, { kind: 'error', text: 'Tick the box to confirm.' }),
          400,
        );
      }
      const secret = await request.gateway.rotateWebhookSecret(accountId);
      const text = secret.previous_secret_expires_at
        ? 'A new signing secret is in use. The previous one keeps signing alongside it for 24 hours.'
        : 'Your signing secret is ready.';
      return reply.page((ctx) => webhooksPage(ctx, secret, { kind: 'ok', text }, true));
    },
  );
}
