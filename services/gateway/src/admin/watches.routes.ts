/**
 * GET /admin/v1/accounts/{id}/watches and DELETE …/watches/{watch_id}: the account's watches for
 * the dashboard's watches page, and its Delete button; the same answers as the public GET
 * /api/v1/watches and DELETE /api/v1/watches/{watch_id}, without the request id. POST
 * …/watches/{watch_id}/resume: its Resume button, for a watch paused after a compromise.
 */
import type { FastifyInstance } from 'fastify';
import type { WatchList } from '@subx/contracts/admin-api';
import { AppError } from '@subx/errors';
import type { AccountRepository } from '../access/accounts.ts';
import { adminRoute } from './operations.ts';
import type { WatchesApi } from '@subx/backends';
import type { AuditLog } from '../domain/audit-log.ts';

export function adminWatchRoutes(
  fastify: FastifyInstance,
  options: { accounts: AccountRepository; watches: WatchesApi; audit?: AuditLog },
): void {
  /** After the job service answered OK: what the operator (or the dashboard through it) did. */
  const recordOf = (
    action: 'watch.deleted' | 'watch.resumed',
    accountId: string,
    watchId: string,
    ip: string,
  ) =>
    options.audit?.record({
      accountId,
      action,
      actor: { type: 'operator', id: null },
      target: { type: 'watch', id: watchId },
      sourceIp: ip,
    });
  const known = async (id: string) => {
    if (!(await options.accounts.get(id))) throw new AppError('NOT_FOUND', 'No account exists with this id.');
  };
  const list = adminRoute('listAccountWatches');
  fastify.get<{ Params: { id: string } }>(list.url, { schema: list.schema }, async (request) => {
    await known(request.params.id);
    // The job service's document; that it is the contract's list is checked there (api.ts).
    return (await options.watches.list(request.params.id)) as unknown as WatchList;
  });
  const remove = adminRoute('deleteAccountWatch');
  fastify.delete<{ Params: { id: string; watch_id: string } }>(
    remove.url,
    { schema: remove.schema },
    async (request) => {
      await known(request.params.id);
      const deleted = await options.watches.delete(request.params.id, request.params.watch_id);
      await recordOf('watch.deleted', request.params.id, request.params.watch_id, request.ip);
      return deleted;
    },
  );
  const resume = adminRoute('resumeAccountWatch');
  fastify.post<{ Params: { id: string; watch_id: string } }>(
    resume.url,
    { schema: resume.schema },
    async (request) => {
      await known(request.params.id);
      const watch = await options.watches.resume(request.params.id, request.params.watch_id);
      await recordOf('watch.resumed', request.params.id, request.params.watch_id, request.ip);
      return watch;
    },
  );
}
