/**
 * The dashboard as a fastify instance (no listen). Server-rendered pages; every state-changing
 * request is a POST form carrying a CSRF token: the session's (synchronizer pattern) once signed
 * in, a signed double-submit token before (anonymous-csrf.ts, so anonymous visits store nothing);
 * sessions, throttling and one-time links live in the KeyValueStore, people in the DocumentStore,
 * and everything about accounts, keys and usage comes from the gateway's admin API. Signed-in
 * pages: account-routes.ts; operators: operators.ts.
 */
import { fileURLToPath } from 'node:url';
import Fastify, { LogController } from 'fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import fastifyStatic from '@fastify/static';
import type { DocumentStore, KeyValueStore } from '@subx/ports';
import { withTimeout } from '@subx/service-kit';
import type { Logger } from '@subx/service-kit';
import { createAbuseLimits } from './abuse-limits.ts';
import { registerAccountRoutes } from './account-routes.ts';
import { createAnonymousCsrf } from './anonymous-csrf.ts';
import { createAuditLog } from './audit.ts';
import type { DashboardConfig } from './config.ts';
import { cookiePolicy } from './cookies.ts';
import type { GatewayClient } from './gateway-client.ts';
import { GatewayError } from './gateway-client.ts';
import type { Mailer } from './mailer.ts';
import { createOneTimeLinks } from './one-time-links.ts';
import { createOperatorPolicy, registerOperatorRoutes } from './operators.ts';
import type { PageContext, Viewer } from './pages.ts';
import { forgotPage, messagePage, resetPage, signInPage, signUpPage, verifyPage } from './pages.ts';
import {
  MAX_PASSWORD_LENGTH,
  MIN_PASSWORD_LENGTH,
  decoyHash,
  hashPassword,
  needsRehash,
  verifyPassword,
} from './passwords.ts';
import type { Session } from './sessions.ts';
import { createSessionStore, csrfMatches } from './sessions.ts';
import type { ThrottleSubject } from './sign-in-throttle.ts';
import { createSignInThrottle } from './sign-in-throttle.ts';
import { throttleNetwork } from './throttle-network.ts';
import type { UserDoc } from './users.ts';
import { createUserRepository, normalizeEmail } from './users.ts';

const STATIC_ROOT = fileURLToPath(new URL('../static/', import.meta.url));
const IP_FREE_FAILURES = 20;
const EMAIL_FREE_FAILURES = 3;

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export interface DashboardDeps {
  config: DashboardConfig;
  kv: KeyValueStore;
  store: DocumentStore;
  gateway: GatewayClient;
  mailer: Mailer;
  logger: Logger;
  now?: () => number;
}

interface RequestState {
  /** Signed-in visitors only. */
  session: Session | null;
  user: UserDoc | null;
  /** An anonymous visitor's CSRF token, once this request has one. */
  anonymousCsrf?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    dash: RequestState;
  }
}

type Form = Record<string, unknown>;
const field = (body: unknown, name: string): string => {
  const value = (body as Form | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};

export async function buildDashboardApp(deps: DashboardDeps): Promise<FastifyInstance> {
  const { config, kv, gateway, mailer, logger } = deps;
  const now = deps.now ?? Date.now;
  const users = createUserRepository(deps.store);
  await users.init();
  const sessions = createSessionStore({ kv, ttlMs: config.SESSION_TTL_MS, now });
  const throttle = createSignInThrottle({ kv, now });
  const limits = createAbuseLimits({ kv, now });
  const links = createOneTimeLinks(kv);
  const audit = createAuditLog(logger);
  const operators = createOperatorPolicy(config, audit);
  const anonymousCsrf = createAnonymousCsrf(config.ADMIN_TOKEN);
  const cookiesFor = cookiePolicy(config);
  // The emailed links' base is configuration, never the request's Host header (which an attacker
  // chooses: a reset link pointing at their host would hand them the token).
  const publicUrl = () => {
    if (config.DASHBOARD_PUBLIC_URL) return config.DASHBOARD_PUBLIC_URL.replace(/\/+$/, '');
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.DASHBOARD_PORT;
    const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? 'localhost' : config.HOST;
    return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  };
  const apiUrl = (config.PUBLIC_API_URL ?? config.GATEWAY_URL).replace(/\/+$/, '');
  const decoy = decoyHash(config.PASSWORD_SCRYPT_N);

  const app = Fastify({
    // Requests are logged below without query strings: the emailed links carry one-time tokens.
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: config.TRUST_PROXY.length > 0 ? config.TRUST_PROXY : false,
    bodyLimit: 16 * 1024,
    // Every socket wait is bounded: the whole request must arrive within the request timeout
    // (slow-loris), an idle socket closes after the keep-alive timeout.
    requestTimeout: config.DASHBOARD_REQUEST_TIMEOUT_MS,
    // Socket inactivity: a handler may wait on a few sequential gateway calls, each bounded.
    connectionTimeout: Math.max(config.DASHBOARD_REQUEST_TIMEOUT_MS, 3 * config.GATEWAY_TIMEOUT_MS),
    keepAliveTimeout: config.DASHBOARD_KEEP_ALIVE_TIMEOUT_MS,
    // Node checks the request timeout every 30 s by default, far too coarse for short bounds.
    http: {
      connectionsCheckingInterval: Math.min(1_000, config.DASHBOARD_REQUEST_TIMEOUT_MS),
      headersTimeout: config.DASHBOARD_REQUEST_TIMEOUT_MS,
      requestTimeout: config.DASHBOARD_REQUEST_TIMEOUT_MS,
    },
    exposeHeadRoutes: false,
    return503OnClosing: true,
  }) as unknown as FastifyInstance;

  await app.register(fastifyCookie);
  await app.register(fastifyFormbody);
  await app.register(fastifyStatic, { root: STATIC_ROOT, prefix: '/static/', maxAge: 3_600_000 });
  app.decorateRequest('dash', null as unknown as RequestState);

  const viewerOf = (user: UserDoc | null): Viewer | null =>
    user ? { email: user.email, verified: user.email_verified, operator: operators.isOperator(user) } : null;
  const ctxOf = (request: FastifyRequest, csrf: string): PageContext => ({
    csrf,
    viewer: viewerOf(request.dash.user),
    path: request.url.split('?')[0]!,
  });

  function setCookie(request: FastifyRequest, reply: FastifyReply, kind: 'session' | 'csrf', value: string) {
    const names = cookiesFor(request);
    // __Host- cookies must be Secure with Path=/ and no Domain (cookies.ts has the rule).
    void reply.setCookie(names[kind], value, {
      httpOnly: true,
      sameSite: 'lax',
      path: '/',
      secure: names.secure,
      maxAge: Math.floor(config.SESSION_TTL_MS / 1000),
    });
  }

  /** The CSRF token for this visitor's forms: the session's, or a stateless one (no store write). */
  function csrfFor(request: FastifyRequest, reply: FastifyReply): string {
    if (request.dash.session) return request.dash.session.csrf;
    if (request.dash.anonymousCsrf) return request.dash.anonymousCsrf;
    const cookie = request.cookies[cookiesFor(request).csrf];
    let token = anonymousCsrf.isSigned(cookie) ? cookie : null;
    if (!token) {
      token = anonymousCsrf.mint();
      setCookie(request, reply, 'csrf', token);
    }
    request.dash.anonymousCsrf = token;
    return token;
  }

  async function signIn(request: FastifyRequest, reply: FastifyReply, user: UserDoc): Promise<void> {
    if (request.dash.session) await sessions.destroy(request.dash.session.id);
    const session = await sessions.create(user._id, user.session_epoch);
    request.dash = { session, user };
    setCookie(request, reply, 'session', session.id);
  }

  async function page(
    request: FastifyRequest,
    reply: FastifyReply,
    render: (ctx: PageContext) => string,
    status = 200,
  ) {
    return reply
      .code(status)
      .type('text/html; charset=utf-8')
      .send(render(ctxOf(request, csrfFor(request, reply))));
  }

  /** Sets Retry-After; the whole seconds to show. */
  function tooManyAttempts(reply: FastifyReply, waitMs: number): number {
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    void reply.header('retry-after', String(seconds));
    return seconds;
  }

  const signInSubjects = (request: FastifyRequest, email: string | null): ThrottleSubject[] => [
    { kind: 'ip', value: throttleNetwork(request.ip), free: IP_FREE_FAILURES },
    ...(email ? [{ kind: 'email' as const, value: email, free: EMAIL_FREE_FAILURES }] : []),
  ];

  app.addHook('onRequest', async (request, reply) => {
    request.dash = { session: null, user: null };
    // Probes and static files need no session (and a probe must not depend on a session lookup).
    const sessionless = request.url.startsWith('/static/') || request.url.startsWith('/health/');
    const session = sessionless ? null : await sessions.load(request.cookies[cookiesFor(request).session]);
    if (session) {
      const user = await users.byId(session.userId);
      if (user && session.epoch === user.session_epoch) {
        request.dash = { session, user };
      } else {
        await sessions.destroy(session.id);
      }
    }
    void reply.headers({
      'content-security-policy': CONTENT_SECURITY_POLICY,
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      // The reset and verification pages carry tokens in their URL: never leak it in a Referer.
      'referrer-policy': 'no-referrer',
      'cross-origin-opener-policy': 'same-origin',
      'permissions-policy': 'camera=(), microphone=(), geolocation=()',
    });
    if (!request.url.startsWith('/static/')) void reply.header('cache-control', 'no-store');
  });

  // Synchronizer-token CSRF check on every state-changing request (all are POST forms), before
  // any handler runs. /admin/* is bearer-token API, not cookie-authenticated.
  app.addHook('preHandler', async (request, reply) => {
    if (request.method === 'GET' || request.url.startsWith('/admin/')) return;
    const token = field(request.body, '_csrf');
    const valid = request.dash.session
      ? csrfMatches(request.dash.session, token)
      : anonymousCsrf.matches(request.cookies[cookiesFor(request).csrf], token);
    if (!valid) {
      return reply
        .code(403)
        .type('text/html; charset=utf-8')
        .send(
          messagePage(
            ctxOf(request, csrfFor(request, reply)),
            'Form expired',
            'This form has expired or did not come from this site. Go back, reload the page and try again.',
            'error',
          ),
        );
    }
  });

  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        method: request.method,
        path: request.url.split('?')[0],
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      },
      'request',
    );
  });

  app.setErrorHandler(async (error: unknown, request, reply) => {
    const gatewayDown = error instanceof GatewayError || (error as { name?: string }).name === 'TimeoutError';
    const status = (error as { statusCode?: number }).statusCode;
    if (!gatewayDown && typeof status === 'number' && status >= 400 && status < 500) {
      return page(
        request,
        reply,
        (ctx) => messagePage(ctx, 'Bad request', 'The request could not be read.', 'error'),
        status,
      );
    }
    request.log.error({ err: error, path: request.url.split('?')[0] }, 'dashboard request failed');
    return page(
      request,
      reply,
      (ctx) =>
        messagePage(
          ctx,
          gatewayDown ? 'The API is not answering' : 'Something went wrong',
          gatewayDown
            ? 'The subx API could not be reached. Try again in a moment.'
            : 'An unexpected error happened. Try again.',
          'error',
        ),
      gatewayDown ? 502 : 500,
    );
  });

  app.setNotFoundHandler(async (request, reply) =>
    page(request, reply, (ctx) => messagePage(ctx, 'Not found', 'There is no page here.', 'error'), 404),
  );

  function requireUser(request: FastifyRequest, reply: FastifyReply): UserDoc | null {
    if (request.dash.user) return request.dash.user;
    void reply.redirect('/sign-in', 303);
    return null;
  }

  async function sendLink(user: UserDoc, purpose: 'verify' | 'reset', replacing = false): Promise<void> {
    // A few mails of each kind per address (abuse-limits.ts); the page answers the same either way.
    if (!(await limits.mayMail(purpose, user.email, { replacing }))) return;
    const token = await links.issue(purpose, user._id);
    const url = `${publicUrl()}/${purpose}?token=${token}`;
    const mail =
      purpose === 'verify'
        ? {
            subject: 'Confirm your email for subx',
            text: `Open this link to confirm your email address and start using the subx API:\n\n${url}\n\nThe link works once, for 24 hours. If you did not sign up, ignore this mail.`,
          }
        : {
            subject: 'Reset your subx password',
            text: `Open this link to choose a new password:\n\n${url}\n\nThe link works once, for 1 hour. If you did not ask for it, ignore this mail.`,
          };
    await mailer.send({ to: user.email, ...mail });
  }

  // ---------------------------------------------------------------- pages without sign-in

  // Probes: live = the process answers; ready = both stores answer within 2 s and we are not
  // closing (fastify answers 503 itself while closing). The gateway is not part of readiness: a
  // gateway outage shows as a 502 page, and restarting dashboards would not fix it.
  app.get('/health/live', async () => ({ status: 'ok' }));
  app.get('/health/ready', async (_request, reply) => {
    const ping = (p: () => Promise<void>) =>
      withTimeout(
        () =>
          p().then(
            () => true,
            () => false,
          ),
        2_000,
        () => false,
      );
    const [kvOk, storeOk] = await Promise.all([ping(() => kv.ping()), ping(() => deps.store.ping())]);
    const ok = kvOk && storeOk;
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'down', kv: kvOk, store: storeOk });
  });

  app.get('/', async (request, reply) => reply.redirect(request.dash.user ? '/keys' : '/sign-in', 303));

  app.get('/sign-up', async (request, reply) => page(request, reply, (ctx) => signUpPage(ctx)));

  app.post('/sign-up', async (request, reply) => {
    const email = normalizeEmail(field(request.body, 'email'));
    const password = field(request.body, 'password');
    if (!email) {
      return page(
        request,
        reply,
        (ctx) => signUpPage(ctx, { kind: 'error', text: 'Enter a valid email address.' }),
        400,
      );
    }
    if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
      return page(
        request,
        reply,
        (ctx) =>
          signUpPage(
            ctx,
            {
              kind: 'error',
              text: `The password needs ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters.`,
            },
            email,
          ),
        400,
      );
    }
    // Per client network, before scrypt runs: a sign-up flood cannot burn the CPU.
    const waitMs = await limits.signUpWaitMs(throttleNetwork(request.ip));
    if (waitMs > 0) {
      const seconds = tooManyAttempts(reply, waitMs);
      return page(
        request,
        reply,
        (ctx) =>
          signUpPage(
            ctx,
            { kind: 'error', text: `Too many sign-ups from your network. Try again in ${seconds} s.` },
            email,
          ),
        429,
      );
    }
    const hash = await hashPassword(password, config.PASSWORD_SCRYPT_N);
    // A sign-up for an address nobody confirmed yet replaces the pending one (pre-account hijack:
    // whoever signed up first with someone else's address keeps no password, session or link).
    // Its links die before its password changes, so an old link cannot confirm the new password.
    const created = await users.create(email, hash, now());
    const pending = created ? null : await users.byEmail(email);
    if (pending && !pending.email_verified) await links.revokeAll('verify', pending._id);
    const user =
      created ?? (pending && !pending.email_verified ? await users.replacePending(email, hash) : null);
    // The same answer whether or not the address was taken: sign-up does not reveal who has an account.
    if (user) await sendLink(user, 'verify', !created);
    return page(request, reply, (ctx) =>
      messagePage(
        ctx,
        'Check your inbox',
        `We sent a link to ${email}. Open it to confirm your address, then sign in.`,
      ),
    );
  });

  app.get('/sign-in', async (request, reply) => page(request, reply, (ctx) => signInPage(ctx)));

  app.post('/sign-in', async (request, reply) => {
    const emailInput = field(request.body, 'email');
    const email = normalizeEmail(emailInput);
    const password = field(request.body, 'password');
    const decision = await throttle.begin(signInSubjects(request, email));
    if (!decision.allowed) {
      const seconds = tooManyAttempts(reply, decision.waitMs);
      return page(
        request,
        reply,
        (ctx) =>
          signInPage(
            ctx,
            { kind: 'error', text: `Too many failed attempts. Try again in ${seconds} s.` },
            email ?? '',
          ),
        429,
      );
    }
    const user = email && password.length <= MAX_PASSWORD_LENGTH ? await users.byEmail(email) : null;
    // Unknown addresses cost one scrypt too, so timing does not tell who has an account.
    const ok = user
      ? await verifyPassword(password, user.password_hash)
      : (await verifyPassword(password, await decoy), false);
    if (!user || !ok) {
      await decision.attempt.failed();
      return page(
        request,
        reply,
        (ctx) => signInPage(ctx, { kind: 'error', text: 'Wrong email or password.' }, email ?? ''),
        401,
      );
    }
    await decision.attempt.succeeded();
    if (needsRehash(user.password_hash, config.PASSWORD_SCRYPT_N)) {
      await users.update(user._id, { password_hash: await hashPassword(password, config.PASSWORD_SCRYPT_N) });
    }
    operators.noteConfiguredGrant(user, 'sign-in');
    await signIn(request, reply, user);
    return reply.redirect('/keys', 303);
  });

  app.post('/sign-out', async (request, reply) => {
    if (request.dash.session) await sessions.destroy(request.dash.session.id);
    request.dash = { session: null, user: null };
    void reply.clearCookie(cookiesFor(request).session, { path: '/', secure: cookiesFor(request).secure });
    return reply.redirect('/sign-in', 303);
  });

  const linkExpired = (request: FastifyRequest, reply: FastifyReply) =>
    page(
      request,
      reply,
      (ctx) => messagePage(ctx, 'Link expired', 'This link is invalid, used or expired.', 'error'),
      400,
    );

  /** GET of a mailed link: a page with a form (nothing changes on GET), or "expired". */
  function linkPage(purpose: 'verify' | 'reset', render: (ctx: PageContext, token: string) => string) {
    return async (request: FastifyRequest, reply: FastifyReply) => {
      const token = String((request.query as Record<string, unknown>).token ?? '');
      if ((await links.peek(purpose, token)) === null) return linkExpired(request, reply);
      return page(request, reply, (ctx) => render(ctx, token));
    };
  }

  app.get('/verify', linkPage('verify', verifyPage));

  app.post('/verify', async (request, reply) => {
    const token = field(request.body, 'token');
    const userId = await links.peek('verify', token);
    let user = userId ? await users.byId(userId) : null;
    if (!user) return linkExpired(request, reply);
    if (!user.account_id) {
      // The gateway account comes with a key nobody has seen: revoke it, so the first key is the
      // one this person generates and sees. Done before the link is used up, so a gateway outage
      // leaves the link working for another try.
      const { account_id: accountId } = await gateway.createAccount(user.email);
      await gateway.revokeKey(accountId);
      user = (await users.attachAccount(user._id, accountId)) ?? user;
    }
    if ((await links.redeem('verify', token)) === null) return linkExpired(request, reply);
    await users.update(user._id, { email_verified: true });
    // Confirming ends every other session of the account (one opened by whoever signed up with
    // this address before its owner did); the confirming person, if signed in as it, stays in.
    await users.endSessions(user._id);
    const confirmed = await users.byId(user._id);
    if (confirmed && request.dash.user?._id === confirmed._id) await signIn(request, reply, confirmed);
    if (confirmed) operators.noteConfiguredGrant(confirmed, 'confirmation');
    return page(request, reply, (ctx) =>
      messagePage(
        ctx,
        'Email confirmed',
        request.dash.user
          ? 'Your address is confirmed. You can generate an API key now.'
          : 'Your address is confirmed. Sign in to generate an API key.',
      ),
    );
  });

  app.post('/verify/resend', async (request, reply) => {
    const user = requireUser(request, reply);
    if (!user) return reply;
    if (!user.email_verified) await sendLink(user, 'verify');
    return page(request, reply, (ctx) =>
      messagePage(ctx, 'Check your inbox', `We sent a new link to ${user.email}.`),
    );
  });

  app.get('/forgot', async (request, reply) => page(request, reply, (ctx) => forgotPage(ctx)));

  app.post('/forgot', async (request, reply) => {
    const email = normalizeEmail(field(request.body, 'email'));
    const user = email ? await users.byEmail(email) : null;
    if (user) await sendLink(user, 'reset');
    return page(request, reply, (ctx) =>
      messagePage(
        ctx,
        'Check your inbox',
        'If an account uses this address, we sent it a link to reset the password.',
      ),
    );
  });

  app.get(
    '/reset',
    linkPage('reset', (ctx, token) => resetPage(ctx, token)),
  );

  app.post('/reset', async (request, reply) => {
    const token = field(request.body, 'token');
    const password = field(request.body, 'password');
    if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
      return page(
        request,
        reply,
        (ctx) =>
          resetPage(ctx, token, {
            kind: 'error',
            text: `The password needs ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters.`,
          }),
        400,
      );
    }
    const userId = await links.redeem('reset', token);
    const user = userId ? await users.byId(userId) : null;
    if (!user) {
      return linkExpired(request, reply);
    }
    // Every existing session of this person ends (the old password may be what leaked).
    await users.update(user._id, { password_hash: await hashPassword(password, config.PASSWORD_SCRYPT_N) });
    await users.endSessions(user._id);
    await throttle.clear({ kind: 'email', value: user.email, free: EMAIL_FREE_FAILURES });
    if (request.dash.session) await sessions.destroy(request.dash.session.id);
    request.dash = { session: null, user: null };
    return page(request, reply, (ctx) =>
      messagePage(ctx, 'Password changed', 'Your password is changed. Sign in with the new one.'),
    );
  });

  // ---------------------------------------------------------------- signed in

  registerAccountRoutes(app, { gateway, now, apiUrl, field, page, requireUser });

  // ---------------------------------------------------------------- operators

  registerOperatorRoutes(app, {
    config,
    users,
    gateway,
    sessions,
    throttle,
    audit,
    policy: operators,
    now,
    field,
    page,
    requireUser,
    signInSubjects,
    tooManyAttempts,
  });

  return app;
}
