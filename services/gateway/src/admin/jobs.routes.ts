/**
 * GET /admin/v1/accounts/{id}/jobs?limit=&cursor=: the account's bulk jobs, newest first, for the
 * dashboard's jobs page; the same page shape as the public GET /api/v1/jobs. `limit` (1 to 100,
 * default 20) and `cursor` are checked by the operation table's schema (admin/operations.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { JobsPage } from '@subx/contracts/admin-api';
import { AppError } from '@subx/errors';
import type { AccountRepository } from '../access/accounts.ts';
import type { JobsService } from '../jobs/service.ts';
import { adminRoute } from './operations.ts';

/**
 * The contract's job object is open (the public job object has more fields than the admin API
 * promises), so its type has an index signature that an interface never matches: compare the
 * promised fields only.
 */
type Promised<T> = { [K in keyof T as string extends K ? never : K]: T[K] };
type PromisedPage = Omit<JobsPage, 'jobs'> & { jobs: Promised<JobsPage['jobs'][number]>[] };

export function adminJobRoutes(
  fastify: FastifyInstance,
  options: { accounts: AccountRepository; jobs: JobsService },
): void {
  const route = adminRoute('listAccountJobs');
  fastify.get<{ Params: { id: string }; Querystring: { limit: number; cursor?: string } }>(
    route.url,
    { schema: route.schema },
    async (request): Promise<PromisedPage> => {
      const { id } = request.params;
      const { limit, cursor } = request.query;
      if (!(await options.accounts.get(id)))
        throw new AppError('NOT_FOUND', 'No account exists with this id.');
      return options.jobs.list(id, { limit, ...(cursor !== undefined ? { cursor } : {}) });
    },
  );
}
