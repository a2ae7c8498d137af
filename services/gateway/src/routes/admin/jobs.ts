/**
 * GET /admin/v1/accounts/{id}/jobs?limit=&cursor=: the account's bulk jobs, newest first, for the
 * dashboard's jobs page; the same page shape as the public GET /api/v1/jobs.
 */
import type { FastifyInstance } from 'fastify';
import { AppError, Errors } from '@subx/errors';
import type { AccountRepository } from '../../access/accounts.ts';
import type { JobsService } from '../../jobs/service.ts';

export function adminJobRoutes(
  fastify: FastifyInstance,
  options: { accounts: AccountRepository; jobs: JobsService },
): void {
  fastify.get('/admin/v1/accounts/:id/jobs', async (request) => {
    const { id } = request.params as { id: string };
    const query = request.query as Record<string, unknown>;
    const limit = query.limit === undefined ? 20 : Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
      throw Errors.invalidRequest('limit must be an integer from 1 to 100.');
    }
    const cursor = query.cursor;
    if (cursor !== undefined && typeof cursor !== 'string')
      throw Errors.invalidRequest('cursor must be a string.');
    if (!(await options.accounts.get(id))) throw new AppError('NOT_FOUND', 'No account exists with this id.');
    return options.jobs.list(id, { limit, ...(cursor !== undefined ? { cursor } : {}) });
  });
}
