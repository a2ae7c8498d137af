/**
 * GET and PATCH /api/v1/account/retention: the calling key's account's data retention
 * (access/retention.ts does the work and the audit). Account-only: nothing counted or charged.
 */
import type { FastifyRequest } from 'fastify';
import type { UpdateRetentionBody } from '@subx/contracts/retention';
import { AppError } from '@subx/errors';
import type { KeyHolder } from '../access/key-limits.ts';
import type { AccountRetention, RetentionChanger } from '../access/retention.ts';
import { accountIdOf, routeOptions, routePath } from '../http/route-context.ts';
import type { RouteContext, RouteRegistrar } from '../http/route-context.ts';
import { retentionOperation } from './operations.ts';

function retentionOf(ctx: RouteContext): AccountRetention {
  if (!ctx.deps.retention)
    throw new AppError('SERVICE_UNAVAILABLE', 'Data retention settings are not enabled on this gateway.');
  return ctx.deps.retention;
}

/** The calling key, as the maker of a change. */
function changerOf(request: FastifyRequest): RetentionChanger {
  const holder = request.account as KeyHolder | null;
  return { actor: { type: 'key', id: holder?.keyId ?? null }, sourceIp: request.ip };
}

const gone = () => new AppError('UNAUTHORIZED', 'The account of this key no longer exists.');

export const registerRetention: RouteRegistrar = (app, ctx) => {
  const get = retentionOperation('getAccountRetention');
  app.get(routePath(get), routeOptions(ctx, get), async (request, reply) => {
    const settings = await retentionOf(ctx).get(accountIdOf(request));
    if (!settings) throw gone();
    reply.header('cache-control', 'no-store');
    return { ...settings, request_id: request.id };
  });

  const update = retentionOperation('updateAccountRetention');
  app.patch<{ Body: UpdateRetentionBody }>(
    routePath(update),
    routeOptions(ctx, update),
    async (request, reply) => {
      const settings = await retentionOf(ctx).update(accountIdOf(request), request.body, changerOf(request));
      if (!settings) throw gone();
      reply.header('cache-control', 'no-store');
      return { ...settings, request_id: request.id };
    },
  );
};
