/**
 * The operator role and everything operators do (issue 19):
 * - the role needs a confirmed address, whichever way it is given (OPERATOR_EMAILS or the stored
 *   flag set through the promotion API), so an unconfirmed sign-up for an operator's address gets
 *   nothing;
 * - operator pages and actions need the password entered within OPERATOR_REAUTH_MS (sign-in counts;
 *   afterwards /reauth asks again, throttled like sign-in);
 * - every grant and every operator action is an audit event (audit.ts).
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuditLog } from './audit.ts';
import type { DashboardConfig } from './config.ts';
import type { GatewayClient, Tier } from './gateway-client.ts';
import { TIERS } from './gateway-client.ts';
import type { Notice, OperatorRow, PageContext } from './pages.ts';
import { messagePage, operatorsPage, reauthPage } from './pages.ts';
import { MAX_PASSWORD_LENGTH, verifyPassword } from './passwords.ts';
import type { SessionStore } from './sessions.ts';
import type { SignInThrottle, ThrottleSubject } from './sign-in-throttle.ts';
import type { UserDoc, UserRepository } from './users.ts';
import { normalizeEmail } from './users.ts';

const OPERATORS_PAGE_SIZE = 25;

export interface OperatorPolicy {
  isOperator(user: UserDoc): boolean;
  /** Audits a role that comes from OPERATOR_EMAILS, each time a confirmed account gets it. */
  noteConfiguredGrant(user: UserDoc, how: 'sign-in' | 'confirmation'): void;
}

export function createOperatorPolicy(config: DashboardConfig, audit: AuditLog): OperatorPolicy {
  const configured = new Set(config.OPERATOR_EMAILS.map((e) => e.toLowerCase()));
  return {
    isOperator: (user) => user.email_verified && (user.operator || configured.has(user.email)),
    noteConfiguredGrant(user, how) {
      if (!user.email_verified || !configured.has(user.email)) return;
      audit('operator.granted', {
        actor: { config: 'OPERATOR_EMAILS' },
        target: { email: user.email, user_id: user._id },
        details: { via: how },
      });
    },
  };
}

type Render = (ctx: PageContext) => string;

export interface OperatorRouteDeps {
  config: DashboardConfig;
  users: UserRepository;
  gateway: GatewayClient;
  sessions: SessionStore;
  throttle: SignInThrottle;
  audit: AuditLog;
  policy: OperatorPolicy;
  now: () => number;
  field(body: unknown, name: string): string;
  page(request: FastifyRequest, reply: FastifyReply, render: Render, status?: number): Promise<FastifyReply>;
  requireUser(request: FastifyRequest, reply: FastifyReply): UserDoc | null;
  signInSubjects(request: FastifyRequest, email: string | null): ThrottleSubject[];
  tooManyAttempts(reply: FastifyReply, waitMs: number): number;
}

/** Only paths of the operator area may be the target after re-authentication (no open redirect). */
const safeNext = (value: string) => (/^\/operators(?:\?page=\d{1,6})?$/.test(value) ? value : '/operators');

export function registerOperatorRoutes(app: FastifyInstance, deps: OperatorRouteDeps): void {
  const { config, users, gateway, sessions, throttle, audit, policy, now, field, page } = deps;
  const actorOf = (user: UserDoc) => ({ email: user.email, user_id: user._id });

  /** The operator, or null once the reply is sent (sign-in, 403, or the re-authentication step). */
  function requireOperator(request: FastifyRequest, reply: FastifyReply): UserDoc | null {
    const user = deps.requireUser(request, reply);
    if (!user) return null;
    if (!policy.isOperator(user)) {
      void page(
        request,
        reply,
        (ctx) => messagePage(ctx, 'Operators only', 'This page is for operators.', 'error'),
        403,
      );
      return null;
    }
    const session = request.dash.session!;
    if (now() - session.authAt > config.OPERATOR_REAUTH_MS) {
      const next = request.method === 'GET' ? request.url : '/operators';
      void reply.redirect(`/reauth?next=${encodeURIComponent(safeNext(next))}`, 303);
      return null;
    }
    return user;
  }

  async function operatorsView(
    request: FastifyRequest,
    reply: FastifyReply,
    pageNumber: number,
    notice?: Notice,
    status = 200,
  ) {
    const total = await users.count();
    const pages = Math.max(1, Math.ceil(total / OPERATORS_PAGE_SIZE));
    const number = Math.min(Math.max(1, pageNumber), pages);
    const list = await users.list({ skip: (number - 1) * OPERATORS_PAGE_SIZE, limit: OPERATORS_PAGE_SIZE });
    const rows: OperatorRow[] = await Promise.all(
      list.map(async (user) => ({
        user,
        account: user.account_id ? await gateway.getAccount(user.account_id).catch(() => null) : null,
      })),
    );
    return page(request, reply, (ctx) => operatorsPage(ctx, rows, { number, pages, total }, notice), status);
  }

  app.get('/operators', async (request, reply) => {
    if (!requireOperator(request, reply)) return reply;
    const n = Number((request.query as Record<string, unknown>).page ?? 1);
    return operatorsView(request, reply, Number.isSafeInteger(n) ? n : 1);
  });

  app.post('/operators/accounts/:id', async (request, reply) => {
    const operator = requireOperator(request, reply);
    if (!operator) return reply;
    const id = (request.params as { id: string }).id;
    const tier = field(request.body, 'tier');
    const addRaw = field(request.body, 'add_credits').trim() || '0';
    const add = /^\d{1,9}$/.test(addRaw) ? Number(addRaw) : NaN;
    if (!(TIERS as readonly string[]).includes(tier) || Number.isNaN(add)) {
      return operatorsView(
        request,
        reply,
        1,
        { kind: 'error', text: 'Choose a tier and a whole number of credits.' },
        400,
      );
    }
    await gateway.updateAccount(id, { tier: tier as Tier, ...(add > 0 ? { add_credits: add } : {}) });
    audit('operator.account_updated', {
      actor: actorOf(operator),
      target: { account_id: id },
      details: { tier, add_credits: add },
    });
    return operatorsView(request, reply, 1, { kind: 'ok', text: `Saved ${id}.` });
  });

  app.post('/operators/accounts/:id/revoke', async (request, reply) => {
    const operator = requireOperator(request, reply);
    if (!operator) return reply;
    const id = (request.params as { id: string }).id;
    await gateway.revokeKey(id);
    audit('operator.key_revoked', { actor: actorOf(operator), target: { account_id: id } });
    return operatorsView(request, reply, 1, { kind: 'ok', text: `Revoked the key of ${id}.` });
  });

  // ------------------------------------------------ step-up: enter the password again

  app.get('/reauth', async (request, reply) => {
    const user = deps.requireUser(request, reply);
    if (!user) return reply;
    const next = safeNext(String((request.query as Record<string, unknown>).next ?? ''));
    return page(request, reply, (ctx) => reauthPage(ctx, next));
  });

  app.post('/reauth', async (request, reply) => {
    const user = deps.requireUser(request, reply);
    if (!user) return reply;
    const next = safeNext(field(request.body, 'next'));
    const password = field(request.body, 'password');
    const decision = await throttle.begin(deps.signInSubjects(request, user.email));
    if (!decision.allowed) {
      const seconds = deps.tooManyAttempts(reply, decision.waitMs);
      return page(
        request,
        reply,
        (ctx) =>
          reauthPage(ctx, next, {
            kind: 'error',
            text: `Too many failed attempts. Try again in ${seconds} s.`,
          }),
        429,
      );
    }
    const ok = password.length <= MAX_PASSWORD_LENGTH && (await verifyPassword(password, user.password_hash));
    if (!ok) {
      await decision.attempt.failed();
      return page(
        request,
        reply,
        (ctx) => reauthPage(ctx, next, { kind: 'error', text: 'Wrong password.' }),
        401,
      );
    }
    await decision.attempt.succeeded();
    request.dash.session = await sessions.reauthenticated(request.dash.session!);
    if (policy.isOperator(user)) audit('operator.reauthenticated', { actor: actorOf(user) });
    return reply.redirect(next, 303);
  });

  // ------------------------------------------------ promotion API

  // `PUT /admin/operators/{email}` with the gateway's admin token, body `{ "operator": true|false }`.
  // Not cookie-authenticated, so no CSRF token.
  app.put('/admin/operators/:email', async (request, reply) => {
    const header = request.headers.authorization ?? '';
    const token = /^Bearer (\S+)$/.exec(header)?.[1] ?? '';
    const expected = Buffer.from(config.ADMIN_TOKEN);
    const given = Buffer.from(token);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer')
        .send({ error: { code: 'UNAUTHORIZED', message: 'The admin token is missing or invalid.' } });
    }
    const email = normalizeEmail((request.params as { email: string }).email);
    const operator = (request.body as { operator?: unknown } | undefined)?.operator;
    if (!email || typeof operator !== 'boolean') {
      return reply.code(400).send({
        error: {
          code: 'INVALID_REQUEST',
          message: 'Send an email in the path and { "operator": true|false }.',
        },
      });
    }
    const user = await users.byEmail(email);
    if (!user)
      return reply
        .code(404)
        .send({ error: { code: 'NOT_FOUND', message: 'Nobody signed up with this email.' } });
    if (operator && !user.email_verified) {
      return reply.code(409).send({
        error: {
          code: 'EMAIL_NOT_CONFIRMED',
          message: 'This address is not confirmed yet: the operator role needs a confirmed address.',
        },
      });
    }
    await users.update(user._id, { operator });
    audit(operator ? 'operator.granted' : 'operator.revoked', {
      actor: { admin_token: true },
      target: {
        email: user.email,
        user_id: user._id,
        ...(user.account_id ? { account_id: user.account_id } : {}),
      },
      details: { via: 'promotion API' },
    });
    return { email, operator };
  });
}
