/**
 * The admin API (docs/decisions.md "Admin API"), a fastify plugin with full paths under /admin/v1:
 * register it without a prefix. Every route needs `Authorization: Bearer <ADMIN_TOKEN>`. Paths and
 * request schemas come from the admin operation table (admin/operations.ts), which also
 * builds the admin listener's /openapi.json; a request that fails a schema is 400 INVALID_REQUEST.
 *
 * PATCH /admin/v1/accounts/{id}: `credits` SETS the available balance, `add_credits` ADDS to it
 * (both non-negative integers; not both in one call). A tier change takes effect on the next
 * request on every replica (the key cache is invalidated before the call answers).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type {
  Account,
  AccountUsage,
  CreateAccountBody,
  CreatedAccount,
  UpdateAccountBody,
} from '@subx/contracts/admin-api';
import { AppError, Errors, isAppError, toPublicErrorBody } from '@subx/errors';
import type { Clock } from '@subx/ports';
import type { AccountDoc, AccountRepository } from '../access/accounts.ts';
import { constantTimeEqual } from '../access/api-key.ts';
import type { UsageReader } from '../access/usage.ts';
import { MAX_USAGE_RANGE_DAYS } from '../access/usage.ts';
import { DAY_MS, parseUtcDate } from '@subx/credits';
import type { Logger } from '@subx/ports';
import { acceptEmptyJsonBody } from '../http/json-body.ts';
import { validationToAppError } from '../http/validation.ts';
import type { AuditLog } from '../domain/audit-log.ts';
import { keyIdOf } from '../access/accounts.ts';
import { adminRoute } from './operations.ts';

export interface AdminRoutesOptions {
  accounts: AccountRepository;
  adminToken: string;
  /** The token being rotated out (ADMIN_TOKEN_PREVIOUS): accepted alongside `adminToken`. */
  adminTokenPrevious?: string;
  usageReader: UsageReader;
  /** Today's counted requests and this month's charged credits. */
  accountUsage: (accountId: string) => Promise<{ today_requests: number; month_credits: number }>;
  clock: Clock;
  logger?: Logger;
  /** Records what the operator changes (tier, balance, the key); absent: nothing is recorded. */
  audit?: AuditLog;
}

const notFound = () => new AppError('NOT_FOUND', 'No account exists with this id.');

type AccountParams = { Params: { id: string } };

export async function adminRoutes(fastify: FastifyInstance, options: AdminRoutesOptions): Promise<void> {
  const { accounts, adminToken, adminTokenPrevious, usageReader, accountUsage, clock, logger, audit } =
    options;
  const operator = { type: 'operator', id: null } as const;
  const tokens = [adminToken, adminTokenPrevious].filter((t): t is string => Boolean(t));

  async function view(doc: AccountDoc): Promise<Account> {
    return {
      account_id: doc._id,
      tier: doc.tier,
      credits: doc.credits,
      email: doc.email,
      created_at: doc.created_at,
      key: {
        prefix: doc.key.prefix,
        last4: doc.key.last4,
        created_at: doc.key.created_at,
        status: doc.key.status,
      },
      usage: await accountUsage(doc._id),
    };
  }

  fastify.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    let appError: unknown = error;
    const { validation, validationContext } = error as Partial<FastifyError>;
    if (Array.isArray(validation)) {
      // The operation table's schemas (admin/operations.ts): the field and the rule, as on the public API.
      appError = validationToAppError(validation as never, validationContext, {
        body: request.body,
        query: request.query,
      });
    } else if (!isAppError(error)) {
      const status = (error as { statusCode?: unknown }).statusCode;
      if (status === 413) appError = new AppError('PAYLOAD_TOO_LARGE', 'The request body is too large.');
      else if (status === 415)
        appError = new AppError('UNSUPPORTED_MEDIA_TYPE', 'The request body must be application/json.');
      else if (typeof status === 'number' && status >= 400 && status < 500) {
        appError = Errors.invalidRequest('The request body is not valid JSON.');
      } else {
        // request.log already carries request_id; a separate logger needs it added (no duplicate key).
        if (logger) logger.error({ err: error, request_id: request.id }, 'admin request failed');
        else request.log.error({ err: error }, 'admin request failed');
      }
    }
    const body = toPublicErrorBody(appError, request.id);
    const status = isAppError(appError) ? appError.status : 500;
    if (status === 401) void reply.header('WWW-Authenticate', 'Bearer');
    return reply.code(status).send(body);
  });

  // JSON only (in this plugin's context): a text/plain body is 415, not a string to validate.
  fastify.removeContentTypeParser('text/plain');
  acceptEmptyJsonBody(fastify);

  fastify.addHook('onRequest', async (request) => {
    const header = request.headers.authorization;
    // Auth schemes are case-insensitive (RFC 9110 §11.1): `bearer x` and `BEARER x` are `Bearer x`.
    const match = typeof header === 'string' ? /^Bearer +([^\s]+) *$/i.exec(header) : null;
    const token = match?.[1];
    // Every token is compared (no early exit), so the time taken does not tell which one matched.
    const accepted = token !== undefined && tokens.map((t) => constantTimeEqual(token, t)).includes(true);
    if (tokens.length === 0 || !accepted) {
      throw new AppError('UNAUTHORIZED', 'The admin token is missing or invalid.');
    }
  });

  /** A key replaced or revoked: its id (never the key) is the target. */
  async function recordKeyChange(action: 'key.regenerated' | 'key.revoked', accountId: string, ip: string) {
    if (!audit) return;
    // The key is changed already: a failed read only leaves the event without its target.
    const doc = await accounts.get(accountId).catch(() => null);
    await audit.record({
      accountId,
      action,
      actor: operator,
      ...(doc ? { target: { type: 'key', id: keyIdOf(doc.key) } } : {}),
      sourceIp: ip,
    });
  }

  const create = adminRoute('createAccount');
  fastify.post<{ Body: CreateAccountBody }>(create.url, { schema: create.schema }, async (request, reply) => {
    const { tier, credits, email } = request.body;
    const { account, apiKey } = await accounts.createAccount({
      tier,
      ...(credits === undefined ? {} : { credits }),
      email: email ?? null,
    });
    await audit?.record({
      accountId: account._id,
      action: 'key.created',
      actor: operator,
      target: { type: 'key', id: keyIdOf(account.key) },
      sourceIp: request.ip,
      details: { primary: true },
    });
    const created: CreatedAccount = {
      account_id: account._id,
      tier: account.tier,
      credits: account.credits,
      api_key: apiKey,
      created_at: account.created_at,
    };
    return reply.code(201).header('Cache-Control', 'no-store').send(created);
  });

  const get = adminRoute('getAccount');
  fastify.get<AccountParams>(get.url, { schema: get.schema }, async (request) => {
    const doc = await accounts.get(request.params.id);
    if (!doc) throw notFound();
    return view(doc);
  });

  const update = adminRoute('updateAccount');
  fastify.patch<AccountParams & { Body: UpdateAccountBody }>(
    update.url,
    { schema: update.schema },
    async (request) => {
      const body = request.body;
      // The one rule the schema does not say in words a caller can read.
      if (body.credits !== undefined && body.add_credits !== undefined) {
        throw Errors.invalidRequest(
          'Send either credits (set the balance) or add_credits (add to it), not both.',
        );
      }
      const doc = await accounts.update(request.params.id, {
        ...(body.tier === undefined ? {} : { tier: body.tier }),
        ...(body.credits === undefined ? {} : { credits: body.credits }),
        ...(body.add_credits === undefined ? {} : { addCredits: body.add_credits }),
      });
      if (!doc) throw notFound();
      // Which fields changed, never a value: the balance is the operator's business, not the log's.
      const fields = (['tier', 'credits', 'add_credits'] as const).filter((f) => body[f] !== undefined);
      await audit?.record({
        accountId: doc._id,
        action: 'account.updated',
        actor: operator,
        target: { type: 'account', id: doc._id },
        sourceIp: request.ip,
        details: { fields, ...(body.tier === undefined ? {} : { tier: body.tier }) },
      });
      return view(doc);
    },
  );

  const issueKey = adminRoute('issueApiKey');
  fastify.post<AccountParams>(issueKey.url, { schema: issueKey.schema }, async (request, reply) => {
    const apiKey = await accounts.regenerateKey(request.params.id);
    if (apiKey === null) throw notFound();
    await recordKeyChange('key.regenerated', request.params.id, request.ip);
    return reply.code(201).header('Cache-Control', 'no-store').send({ api_key: apiKey });
  });

  const revokeKey = adminRoute('revokeApiKey');
  fastify.delete<AccountParams>(revokeKey.url, { schema: revokeKey.schema }, async (request, reply) => {
    if (!(await accounts.revokeKey(request.params.id))) throw notFound();
    await recordKeyChange('key.revoked', request.params.id, request.ip);
    return reply.code(204).send();
  });

  const usage = adminRoute('getAccountUsage');
  fastify.get<AccountParams & { Querystring: { from?: string; to?: string } }>(
    usage.url,
    { schema: usage.schema },
    async (request): Promise<AccountUsage> => {
      const query = request.query;
      const today = clock.now() - (clock.now() % DAY_MS);
      // The schema checked the form (YYYY-MM-DD); whether it is a real date is checked here.
      const from = query.from === undefined ? today - 29 * DAY_MS : parseUtcDate(query.from);
      const to = query.to === undefined ? today : parseUtcDate(query.to);
      if (from === null || to === null)
        throw Errors.invalidRequest('from and to must be dates as YYYY-MM-DD.');
      if (from > to) throw Errors.invalidRequest('from must not be after to.');
      if ((to - from) / DAY_MS + 1 > MAX_USAGE_RANGE_DAYS) {
        throw Errors.invalidRequest(`The range may span at most ${MAX_USAGE_RANGE_DAYS} days.`);
      }
      const doc = await accounts.get(request.params.id);
      if (!doc) throw notFound();
      const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
      return usageReader.getUsage({ accountId: doc._id, from: iso(from), to: iso(to) });
    },
  );
}
