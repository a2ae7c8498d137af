/**
 * Admin routes the self-service dashboard (services/dashboard) needs beyond the list in docs/decisions.md "Admin API".
 * Registered into the admin plugin's context (after `adminRoutes`), so they share its bearer-token
 * check and error handler.
 *
 * GET  /admin/v1/accounts/{id}/limits: today's requests against the daily limit with the reset
 *      time, the credit balance, the tier's monthly allowance and, per operation, the lowest tier
 *      that may call it and whether this account's tier may (the dashboard explains a 403
 *      TIER_REQUIRED before it happens), from the one pricing table.
 * POST /admin/v1/accounts/{id}/calls: one call of the public API on behalf of the account, for the
 *      dashboard's playground, which never holds the account's key. Body
 *      `{ path: "/api/v1/extract", body: {...} }` or `{ path: "/api/v1/validate", query: { url } }`,
 *      optional `client_ip` (validate's per-IP limit then applies to the person, not the
 *      dashboard). The call runs through the real route (auth, tier, daily limit, credits,
 *      validation), counts and is billed like a call with the key; an account without an active
 *      key gets the 401 a missing key gets. Answers 200 `{ status, headers, body }`.
 * GET  /admin/v1/accounts/{id}/webhook-secret: the account's current webhook signing secret
 *      (created on first need), as GET /api/v1/webhooks/secret answers it.
 * POST /admin/v1/accounts/{id}/webhook-secret: rotates it (201, as POST /api/v1/webhooks/secret);
 *      the previous secret keeps signing for 24 hours.
 */
import { isIP } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { AccountLimits, CallBody, CallResult, WebhookSecret } from '@subx/contracts/admin-api';
import { AppError, Errors } from '@subx/errors';
import { keyIdOf } from '../access/accounts.ts';
import type { AccountRepository } from '../access/accounts.ts';
import type { DelegationRegistry } from '../access/delegation.ts';
import type { AccessPricing } from '@subx/credits';
import { operationAccess } from '../access/capabilities.ts';
import type { DailyRateLimiter } from '@subx/credits';
import type { WebhookSecretsApi } from '@subx/backends';
import type { AuditLog } from '../domain/audit-log.ts';
import { adminRoute } from './operations.ts';

export interface SelfServiceRoutesOptions {
  accounts: AccountRepository;
  rateLimiter: DailyRateLimiter;
  pricing: AccessPricing;
  delegations: DelegationRegistry;
  /** The public API (another listener than this one): the calls run through its real routes. */
  publicApp: FastifyInstance;
  /** The accounts' webhook signing secrets (src/webhooks); absent: those routes answer 503. */
  webhookSecrets?: WebhookSecretsApi;
  /** Records the rotations (actor operator: the admin API does not know which member asked). */
  audit?: AuditLog;
}

const notFound = () => new AppError('NOT_FOUND', 'No account exists with this id.');
/** The playground's operations (their paths are the enum of the call body's schema). */
const CALLS: Record<CallBody['path'], { method: 'GET' | 'POST'; authenticated: boolean }> = {
  '/api/v1/extract': { method: 'POST', authenticated: true },
  '/api/v1/validate': { method: 'GET', authenticated: false },
};
const FORWARDED_HEADERS = [
  'content-type',
  'x-request-id',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'retry-after',
];

export function selfServiceRoutes(fastify: FastifyInstance, options: SelfServiceRoutesOptions): void {
  const { accounts, rateLimiter, pricing, delegations, publicApp, webhookSecrets } = options;
  type AccountParams = { Params: { id: string } };

  const limits = adminRoute('getAccountLimits');
  fastify.get<AccountParams>(
    limits.url,
    { schema: limits.schema },
    async (request): Promise<AccountLimits> => {
      const doc = await accounts.get(request.params.id);
      if (!doc) throw notFound();
      const [state, used] = await Promise.all([
        rateLimiter.peek({ id: doc._id, tier: doc.tier }),
        rateLimiter.todayCount(doc._id),
      ]);
      return {
        account_id: doc._id,
        tier: doc.tier,
        daily: {
          limit: state.limit,
          used,
          remaining: state.remaining,
          reset_at: new Date(state.resetAtMs).toISOString(),
        },
        credits: { balance: doc.credits, monthly_allowance: pricing.monthlyAllowance[doc.tier] },
        operations: operationAccess(doc.tier, pricing),
      };
    },
  );

  const calls = adminRoute('callAsAccount');
  fastify.post<AccountParams & { Body: CallBody }>(
    calls.url,
    { schema: calls.schema },
    async (request, reply) => {
      const { path, body: callBody, query, client_ip: clientIp } = request.body;
      // The schema bounds its length; whether it is an address is node's call.
      if (clientIp !== undefined && isIP(clientIp) === 0) {
        throw Errors.invalidRequest('client_ip must be an IP address.');
      }
      const call = { path, ...CALLS[path], body: callBody, query, clientIp };
      const doc = await accounts.get(request.params.id);
      if (!doc) throw notFound();
      const headers: Record<string, string> = {};
      if (call.authenticated && doc.key.status === 'active') {
        // What the call creates belongs to the active key, as if the key had made it: revoking
        // that key after a compromise stops it too.
        headers['x-api-key'] = delegations.issue({ id: doc._id, tier: doc.tier, keyId: keyIdOf(doc.key) });
      }
      if (call.body !== undefined) headers['content-type'] = 'application/json';
      const response = await publicApp.inject({
        method: call.method,
        url: call.path,
        headers,
        ...(call.query ? { query: call.query } : {}),
        ...(call.body !== undefined ? { payload: JSON.stringify(call.body) } : {}),
        remoteAddress: call.clientIp ?? request.ip,
      });
      // A token the route never redeemed (rejected before admission) must not linger.
      if (headers['x-api-key']) delegations.redeem(headers['x-api-key']);
      const forwarded: Record<string, string> = {};
      for (const name of FORWARDED_HEADERS) {
        const value = response.headers[name];
        if (typeof value === 'string') forwarded[name] = value;
      }
      let body: unknown = response.body;
      if (String(response.headers['content-type'] ?? '').startsWith('application/json')) {
        body = JSON.parse(response.body) as unknown;
      }
      const result: CallResult = { status: response.statusCode, headers: forwarded, body };
      return reply.header('Cache-Control', 'no-store').send(result);
    },
  );

  async function secretsFor(params: {
    id: string;
  }): Promise<{ secrets: WebhookSecretsApi; accountId: string }> {
    if (!webhookSecrets)
      throw new AppError('SERVICE_UNAVAILABLE', 'Webhooks are not enabled on this gateway.');
    const doc = await accounts.get(params.id);
    if (!doc) throw notFound();
    return { secrets: webhookSecrets, accountId: doc._id };
  }

  const getSecret = adminRoute('getWebhookSecret');
  fastify.get<AccountParams>(getSecret.url, { schema: getSecret.schema }, async (request, reply) => {
    const { secrets, accountId } = await secretsFor(request.params);
    const view = (await secrets.current(accountId)) as unknown as WebhookSecret;
    return reply.header('Cache-Control', 'no-store').send(view);
  });

  const rotateSecret = adminRoute('rotateWebhookSecret');
  fastify.post<AccountParams>(rotateSecret.url, { schema: rotateSecret.schema }, async (request, reply) => {
    const { secrets, accountId } = await secretsFor(request.params);
    const view = (await secrets.rotate(accountId)) as unknown as WebhookSecret;
    await options.audit?.record({
      accountId,
      action: 'webhook_secret.rotated',
      actor: { type: 'operator', id: null },
      target: { type: 'webhook_secret', id: accountId },
      sourceIp: request.ip,
    });
    return reply.header('Cache-Control', 'no-store').code(201).send(view);
  });
}
