/**
 * POST /admin/v1/accounts/{id}/secure: the dashboard's password reset and an operator's revocation
 * for compromise (src/recovery/secure-account.ts). The answer can hold a new key: no-store.
 */
import type { FastifyInstance } from 'fastify';
import type { SecureAccountBody, SecuredAccount } from '@subx/contracts/admin-api';
import { AppError } from '@subx/errors';
import type { AccountSecurer } from '../recovery/secure-account.ts';
import { adminRoute } from './operations.ts';

export function adminRecoveryRoutes(fastify: FastifyInstance, options: { secure: AccountSecurer }): void {
  const secure = adminRoute('secureAccount');
  fastify.post<{ Params: { id: string }; Body: SecureAccountBody }>(
    secure.url,
    { schema: secure.schema },
    async (request, reply) => {
      const secured: SecuredAccount | null = await options.secure(request.params.id, request.body.key);
      if (!secured) throw new AppError('NOT_FOUND', 'No account exists with this id.');
      return reply.header('Cache-Control', 'no-store').send(secured);
    },
  );
}
