/**
 * GET, POST /admin/v1/accounts/{id}/keys and DELETE …/keys/{key_id}: the account's keys for the
 * dashboard's keys page, as the public /api/v1/keys routes answer them without the request id. The
 * admin token may give any scope; `member_id` names the dashboard user in the audit log.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ActingMemberQuery, CreateApiKeyBody } from '@subx/contracts/access';
import { AppError } from '@subx/errors';
import type { ApiKeys, KeyManager } from '../access/api-keys.ts';
import { keyNotFound } from '../access/api-keys.ts';
import { adminRoute } from './operations.ts';

const accountNotFound = () => new AppError('NOT_FOUND', 'No account exists with this id.');

function managerOf(request: FastifyRequest<{ Querystring: ActingMemberQuery }>): KeyManager {
  const member = request.query.member_id;
  return {
    actor: member === undefined ? { type: 'operator', id: null } : { type: 'member', id: member },
    sourceIp: request.ip,
  };
}

export function adminKeyRoutes(fastify: FastifyInstance, options: { apiKeys: ApiKeys }): void {
  const { apiKeys } = options;
  const list = adminRoute('listAccountKeys');
  fastify.get<{ Params: { id: string } }>(list.url, { schema: list.schema }, async (request) => {
    const keys = await apiKeys.list(request.params.id);
    if (!keys) throw accountNotFound();
    return { keys };
  });

  const create = adminRoute('createAccountKey');
  fastify.post<{ Params: { id: string }; Querystring: ActingMemberQuery; Body: CreateApiKeyBody }>(
    create.url,
    { schema: create.schema },
    async (request, reply) => {
      const made = await apiKeys.create(request.params.id, request.body, managerOf(request));
      if (!made) throw accountNotFound();
      return reply
        .code(201)
        .header('Cache-Control', 'no-store')
        .send({ ...made.info, api_key: made.apiKey });
    },
  );

  const revoke = adminRoute('revokeAccountKey');
  fastify.delete<{ Params: { id: string; key_id: string }; Querystring: ActingMemberQuery }>(
    revoke.url,
    { schema: revoke.schema },
    async (request) => {
      const revoked = await apiKeys.revoke(request.params.id, request.params.key_id, managerOf(request));
      if (!revoked) throw keyNotFound();
      return revoked;
    },
  );
}
