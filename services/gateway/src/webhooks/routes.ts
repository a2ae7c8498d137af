/**
 * The account's webhook signing secret (src/webhooks/README.md): GET answers the current one
 * (creating it on first need), POST rotates it (201; the previous one signs alongside for 24 h).
 * Account-only routes: the key must be valid, nothing is counted or charged.
 */
import type { FastifyReply } from 'fastify';
import { AppError } from '@subx/errors';
import { webhookOperation } from './operations.ts';
import type { WebhookSecretsApi } from '@subx/backends';
import { routeOptions, routePath } from '../http/route-context.ts';
import type { RouteContext, RouteRegistrar } from '../http/route-context.ts';

function secretsOf(ctx: RouteContext): WebhookSecretsApi {
  if (!ctx.deps.webhookSecrets) {
    throw new AppError('SERVICE_UNAVAILABLE', 'Webhooks are not enabled on this gateway.');
  }
  return ctx.deps.webhookSecrets;
}

// A secret is a credential: no cache, anywhere between us and the caller, may keep it.
const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store');

export const registerWebhooks: RouteRegistrar = (app, ctx) => {
  const rotate = webhookOperation('rotateWebhookSecret');
  app.post(routePath(rotate), routeOptions(ctx, rotate), async (request, reply) => {
    const account = request.account!;
    const view = await secretsOf(ctx).rotate(account.id);
    await ctx.deps.audit?.record({
      accountId: account.id,
      action: 'webhook_secret.rotated',
      actor: { type: 'key', id: account.keyId ?? null },
      target: { type: 'webhook_secret', id: account.id },
      sourceIp: request.ip,
    });
    noStore(reply).code(rotate.successStatus ?? 200);
    return { ...view, request_id: request.id };
  });
  const read = webhookOperation('getWebhookSecret');
  app.get(routePath(read), routeOptions(ctx, read), async (request, reply) => {
    const view = await secretsOf(ctx).current(request.account!.id);
    noStore(reply);
    return { ...view, request_id: request.id };
  });
};
