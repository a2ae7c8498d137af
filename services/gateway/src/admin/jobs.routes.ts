/**
 * GET /admin/v1/accounts/{id}/jobs?limit=&cursor=: the account's bulk jobs, newest first, for the
 * dashboard's jobs page; the same page shape as the public GET /api/v1/jobs. `limit` (1 to 100,
 * default 20) and `cursor` are checked by the operation table's schema (admin/operations.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { JobsPage } from '@subx/contracts/admin-api';
import { AppError } from '@subx/errors';
import type { AccountRepository } from '../access/accounts.ts';
import type { JobsApi } from '@subx/backends';
import { adminRoute } from './operations.ts';

export function adminJobRoutes(
  fastify: FastifyInstance,
  options: { accounts: AccountRepository; jobs: JobsApi },
): void {
  const route = adminRoute('listAccountJobs');
  fastify.get<{ Params: { id: string }; Querystring: { limit: number; cursor?: string } }>(
    route.url,
    { schema: route.schema },
    async (request) => {
      const { id } = request.params;
      const { limit, cursor } = request.query;
      if (!(await options.accounts.get(id)))
        throw new AppError('NOT_FOUND', 'No account exists with this id.');
      // The job service's document; that it is the contract's page is checked there (api.ts).
      return (await options.jobs.list(id, {
        limit,
        ...(cursor !== undefined ? { cursor } : {}),
      })) as unknown as JobsPage;
    },
  );
}
