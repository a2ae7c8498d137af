/**
 * GET and PATCH /admin/v1/accounts/{id}/retention: the account's data retention for the
 * dashboard's settings, as the public /api/v1/account/retention answers it without the request
 * id. `member_id` names the dashboard user in the audit log; absent, the operator made the change.
 */
import type { FastifyInstance } from 'fastify';
import type { ActingMemberQuery } from '@subx/contracts/access';
import type { UpdateRetentionBody } from '@subx/contracts/retention';
import { AppError } from '@subx/errors';
import type { AccountRetention } from '../access/retention.ts';
import { adminRoute } from './operations.ts';

const accountNotFound = () => new AppError('NOT_FOUND', 'No account exists with this id.');

export function adminRetentionRoutes(
  fastify: FastifyInstance,
  options: { retention: AccountRetention },
): void {
  const { retention } = options;
  const get = adminRoute('getAccountRetention');
  fastify.get<{ Params: { id: string } }>(get.url, { schema: get.schema }, async (request) => {
    const settings = await retention.get(request.params.id);
    if (!settings) throw accountNotFound();
    return settings;
  });

  const update = adminRoute('updateAccountRetention');
  fastify.patch<{ Params: { id: string }; Querystring: ActingMemberQuery; Body: UpdateRetentionBody }>(
    update.url,
    { schema: update.schema },
    async (request) => {
      const member = request.query.member_id;
      const settings = await retention.update(request.params.id, request.body, {
        actor: member === undefined ? { type: 'operator', id: null } : { type: 'member', id: member },
        sourceIp: request.ip,
      });
      if (!settings) throw accountNotFound();
      return settings;
    },
  );
}
