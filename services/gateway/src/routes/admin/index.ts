/**
 * The admin API (docs/decisions.md "Admin API"), a fastify plugin with full paths under /admin/v1:
 * register it without a prefix. Every route needs `Authorization: Bearer <ADMIN_TOKEN>`.
 *
 * PATCH /admin/v1/accounts/{id}: `credits` SETS the available balance, `add_credits` ADDS to it
 * (both non-negative integers; not both in one call). A tier change takes effect on the next
 * request on every replica (the key cache is invalidated before the call answers).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, Errors, isAppError, toPublicErrorBody } from '@subx/errors';
import type { Clock } from '@subx/ports';
import { TIERS } from '../../access/types.ts';
import type { Tier } from '../../access/types.ts';
import type { AccountDoc, AccountRepository } from '../../access/accounts.ts';
import { constantTimeEqual } from '../../access/api-key.ts';
import type { UsageReader } from '../../access/usage.ts';
import { MAX_USAGE_RANGE_DAYS } from '../../access/usage.ts';
import { DAY_MS, parseUtcDate } from '../../access/time.ts';
import type { Logger } from '../../access/logger.ts';
import { acceptEmptyJsonBody } from '../../http/json-body.ts';

export interface AdminRoutesOptions {
  accounts: AccountRepository;
  adminToken: string;
  usageReader: UsageReader;
  /** Today's counted requests and this month's charged credits. */
  accountUsage: (accountId: string) => Promise<{ today_requests: number; month_credits: number }>;
  clock: Clock;
  logger?: Logger;
}

const notFound = () => new AppError('NOT_FOUND', 'No account exists with this id.');
const MAX_EMAIL_LENGTH = 254;

function asObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw Errors.invalidRequest('The request body must be a JSON object.');
  }
  return body as Record<string, unknown>;
}

function rejectUnknown(body: Record<string, unknown>, allowed: readonly string[]): void {
  const unknown = Object.keys(body).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) {
    throw Errors.invalidRequest(
      `Unknown field${unknown.length > 1 ? 's' : ''}: ${unknown.map((k) => k.slice(0, 40)).join(', ')}. Allowed: ${allowed.join(', ')}.`,
    );
  }
}

function readTier(value: unknown): Tier {
  if (typeof value !== 'string' || !(TIERS as readonly string[]).includes(value)) {
    throw Errors.invalidRequest(`tier must be one of ${TIERS.join(', ')}.`);
  }
  return value as Tier;
}

function readCredits(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw Errors.invalidRequest(`${field} must be a non-negative integer.`);
  }
  return value;
}

function readEmail(value: unknown): string | null {
  if (value === null) return null;
  if (typeof value !== 'string' || value.length > MAX_EMAIL_LENGTH || !/^[^\s@]+@[^\s@]+$/.test(value)) {
    throw Errors.invalidRequest('email must be an e-mail address.');
  }
  return value;
}

function accountId(request: FastifyRequest): string {
  return (request.params as { id: string }).id;
}

export async function adminRoutes(fastify: FastifyInstance, options: AdminRoutesOptions): Promise<void> {
  const { accounts, adminToken, usageReader, accountUsage, clock, logger } = options;

  async function view(doc: AccountDoc) {
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
    if (!isAppError(error)) {
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
    if (!adminToken || token === undefined || !constantTimeEqual(token, adminToken)) {
      throw new AppError('UNAUTHORIZED', 'The admin token is missing or invalid.');
    }
  });

  fastify.post('/admin/v1/accounts', async (request, reply) => {
    const body = asObject(request.body);
    rejectUnknown(body, ['tier', 'credits', 'email']);
    const tier = readTier(body.tier);
    const credits = body.credits === undefined ? undefined : readCredits(body.credits, 'credits');
    const email = body.email === undefined ? null : readEmail(body.email);
    const { account, apiKey } = await accounts.createAccount({
      tier,
      ...(credits === undefined ? {} : { credits }),
      email,
    });
    return reply.code(201).header('Cache-Control', 'no-store').send({
      account_id: account._id,
      tier: account.tier,
      credits: account.credits,
      api_key: apiKey,
      created_at: account.created_at,
    });
  });

  fastify.get('/admin/v1/accounts/:id', async (request) => {
    const doc = await accounts.get(accountId(request));
    if (!doc) throw notFound();
    return view(doc);
  });

  fastify.patch('/admin/v1/accounts/:id', async (request) => {
    const body = asObject(request.body);
    rejectUnknown(body, ['tier', 'credits', 'add_credits']);
    if (body.credits !== undefined && body.add_credits !== undefined) {
      throw Errors.invalidRequest(
        'Send either credits (set the balance) or add_credits (add to it), not both.',
      );
    }
    const change: { tier?: Tier; credits?: number; addCredits?: number } = {};
    if (body.tier !== undefined) change.tier = readTier(body.tier);
    if (body.credits !== undefined) change.credits = readCredits(body.credits, 'credits');
    if (body.add_credits !== undefined) change.addCredits = readCredits(body.add_credits, 'add_credits');
    const doc = await accounts.update(accountId(request), change);
    if (!doc) throw notFound();
    return view(doc);
  });

  fastify.post('/admin/v1/accounts/:id/api-key', async (request, reply) => {
    const apiKey = await accounts.regenerateKey(accountId(request));
    if (apiKey === null) throw notFound();
    return reply.code(201).header('Cache-Control', 'no-store').send({ api_key: apiKey });
  });

  fastify.delete('/admin/v1/accounts/:id/api-key', async (request, reply) => {
    if (!(await accounts.revokeKey(accountId(request)))) throw notFound();
    return reply.code(204).send();
  });

  fastify.get('/admin/v1/accounts/:id/usage', async (request) => {
    const query = request.query as Record<string, unknown>;
    rejectUnknown(query, ['from', 'to']);
    const today = clock.now() - (clock.now() % DAY_MS);
    const from = query.from === undefined ? today - 29 * DAY_MS : parseUtcDate(query.from);
    const to = query.to === undefined ? today : parseUtcDate(query.to);
    if (from === null || to === null) throw Errors.invalidRequest('from and to must be dates as YYYY-MM-DD.');
    if (from > to) throw Errors.invalidRequest('from must not be after to.');
    if ((to - from) / DAY_MS + 1 > MAX_USAGE_RANGE_DAYS) {
      throw Errors.invalidRequest(`The range may span at most ${MAX_USAGE_RANGE_DAYS} days.`);
    }
    const id = accountId(request);
    const doc = await accounts.get(id);
    if (!doc) throw notFound();
    const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    return usageReader.getUsage({ accountId: doc._id, from: iso(from), to: iso(to) });
  });
}
