import type { FastifyInstance, RouteShorthandOptions } from 'fastify';
import type { AccessPricing } from '@subx/credits';
import type { ModelBudget } from '@subx/credits';
import type { GatewayDeps } from '../deps.ts';
import { admitHook, authenticateHook, idempotencyHook, ipLimitHook } from './access-hooks.ts';
import type { OperationSpec } from '../domain/operation-spec.ts';

export interface RouteContext {
  deps: GatewayDeps;
  pricing: AccessPricing;
  /** Seconds of audio the model may process per account and day (@subx/credits, model-budget.ts). */
  modelBudget: ModelBudget;
}

/** Route options built from the operation table: schemas plus the access hooks it needs. */
export function routeOptions(ctx: RouteContext, spec: OperationSpec): RouteShorthandOptions {
  const schema: Record<string, unknown> = {};
  if (spec.body) schema.body = spec.body;
  if (spec.querystring) schema.querystring = spec.querystring;
  if (spec.params) schema.params = spec.params;
  if (spec.auth !== null && spec.scope === null)
    throw new Error(`operation ${spec.operationId} is authenticated but names no scope`);
  if (spec.auth === 'account')
    return { schema, onRequest: [authenticateHook(ctx.deps.access, ctx.deps.readLimiter, spec.scope!)] };
  if (spec.auth) {
    return {
      schema,
      onRequest: [admitHook(ctx.deps.access, spec.auth)],
      preHandler: [idempotencyHook(ctx.deps.idempotency)],
    };
  }
  return { schema, onRequest: [ipLimitHook(ctx.deps.ipLimiter)] };
}

/** The operation's path as fastify routes it: OpenAPI's `{job_id}` becomes `:job_id`. */
export function routePath(spec: OperationSpec): string {
  return spec.path.replace(/\{(\w+)\}/g, ':$1');
}

/** The account of a route with `auth: 'account'` (its hook set it; without one the route is miswired). */
export function accountIdOf(request: { account: { id: string } | null }): string {
  if (!request.account) throw new Error('account route without an authenticated account');
  return request.account.id;
}

export type RouteRegistrar = (app: FastifyInstance, ctx: RouteContext) => void;
