/**
 * GET, POST /api/v1/keys and DELETE /api/v1/keys/{key_id}: the account's keys, managed by a key
 * with the `keys:admin` scope (access/api-keys.ts does the work and the audit).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CreateApiKeyBody } from '@subx/contracts/access';
import { AppError } from '@subx/errors';
import type { ApiKeys, KeyManager } from '../access/api-keys.ts';
import { keyNotFound } from '../access/api-keys.ts';
import type { KeyHolder } from '../access/key-limits.ts';
import { accountIdOf, routeOptions, routePath } from '../http/route-context.ts';
import type { RouteContext, RouteRegistrar } from '../http/route-context.ts';
import { keyOperation } from './operations.ts';

function keysOf(ctx: RouteContext): ApiKeys {
  if (!ctx.deps.apiKeys)
    throw new AppError('SERVICE_UNAVAILABLE', 'Key management is not enabled on this gateway.');
  return ctx.deps.apiKeys;
}

/** The calling key, as the maker of a change. */
function managerOf(request: FastifyRequest): KeyManager {
  const holder = request.account as KeyHolder | null;
  return {
    actor: { type: 'key', id: holder?.keyId ?? null },
    scopes: holder?.limits?.scopes,
    sourceIp: request.ip,
  };
}

// A new key is a credential: no cache between us and the caller may keep it.
const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store');

export const registerKeys: RouteRegistrar = (app, ctx) => {
  const list = keyOperation('listKeys');
  app.get(routePath(list), routeOptions(ctx, list), async (request) => {
    const keys = await keysOf(ctx).list(accountIdOf(request));
    if (!keys) throw new AppError('UNAUTHORIZED', 'The account of this key no longer exists.');
    return { keys, request_id: request.id };
  });

  const create = keyOperation('createKey');
  app.post<{ Body: CreateApiKeyBody }>(
    routePath(create),
    routeOptions(ctx, create),
    async (request, reply) => {
      const made = await keysOf(ctx).create(accountIdOf(request), request.body, managerOf(request));
      if (!made) throw new AppError('UNAUTHORIZED', 'The account of this key no longer exists.');
      noStore(reply).code(create.successStatus ?? 201);
      return { ...made.info, api_key: made.apiKey, request_id: request.id };
    },
  );

  const revoke = keyOperation('revokeKey');
  app.delete<{ Params: { key_id: string } }>(
    routePath(revoke),
    routeOptions(ctx, revoke),
    async (request) => {
      const revoked = await keysOf(ctx).revoke(
        accountIdOf(request),
        request.params.key_id,
        managerOf(request),
      );
      if (!revoked) throw keyNotFound();
      return { ...revoked, request_id: request.id };
    },
  );
};
