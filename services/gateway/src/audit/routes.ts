/**
 * GET /api/v1/audit: the calling key's account's audit log, one page newest first. Account-only:
 * a valid key, nothing counted or charged; only the key's own account is ever read.
 */
import { AppError } from '@subx/errors';
import { accountIdOf, routeOptions, routePath } from '../http/route-context.ts';
import type { RouteRegistrar } from '../http/route-context.ts';
import { auditOperation } from './operations.ts';

export const registerAudit: RouteRegistrar = (app, ctx) => {
  const list = auditOperation('listAuditEvents');
  app.get<{ Querystring: { limit?: number; cursor?: string } }>(
    routePath(list),
    routeOptions(ctx, list),
    async (request, reply) => {
      const audit = ctx.deps.audit;
      if (!audit) throw new AppError('SERVICE_UNAVAILABLE', 'The audit log is not enabled on this gateway.');
      const page = await audit.list(accountIdOf(request), {
        ...(request.query.limit === undefined ? {} : { limit: request.query.limit }),
        cursor: request.query.cursor ?? null,
      });
      // Who did what on the account: no cache between us and the caller keeps it.
      reply.header('cache-control', 'no-store');
      return { ...page, request_id: request.id };
    },
  );
};
