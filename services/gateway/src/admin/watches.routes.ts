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

export function adminWatchRoutes(
  fastify: FastifyInstance,
  options: { accounts: AccountRepository; watches: WatchesApi },
): void {
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
      return options.watches.delete(request.params.id, request.params.watch_id);
    },
  );
  const resume = adminRoute('resumeAccountWatch');
  fastify.post<{ Params: { id: string; watch_id: string } }>(
    resume.url,
    { schema: resume.schema },
    async (request) => {
      await known(request.params.id);
      return options.watches.resume(request.params.id, request.params.watch_id);
    },
  );
}
