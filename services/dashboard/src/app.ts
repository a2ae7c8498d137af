/**
 * The dashboard as a fastify instance (no listen): the plugins every request passes through, then
 * one route plugin per group. Server-rendered pages; every state-changing request is a POST form
 * carrying a CSRF token (plugins/csrf.ts); sessions, throttling and one-time links live in the
 * KeyValueStore, people in the DocumentStore, and everything about accounts, keys and usage comes
 * from the gateway's admin API (request.gateway, which passes the request id on).
 *
 *   plugins/security-headers.ts  helmet: CSP, no framing, no Referer; no-store
 *   plugins/session.ts           request.dash, reply.startSession / endSession
 *   plugins/csrf.ts              reply.csrfToken, the check before validation and handlers
 *   plugins/render.ts            reply.page, reply.retryAfter, error and not-found pages
 *   plugins/gateway.ts           request.gateway with the request's id
 *   workspaces/workspace-access.ts  every route's declared permission, checked against the role
 *                                the person has in their current workspace
 *   auth/guards.ts               route preHandlers: signedIn, confirmed(...), operator (step-up)
 *   routes/*.ts                  one file per group of pages
 */
import { fileURLToPath } from 'node:url';
import Fastify, { LogController } from 'fastify';
import type { FastifyInstance } from 'fastify';
import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import fastifyStatic from '@fastify/static';
import { requestIdOf } from '@subx/service-kit';
import csrf from './plugins/csrf.ts';
import gatewayPerRequest from './plugins/gateway.ts';
import render from './plugins/render.ts';
import securityHeaders from './plugins/security-headers.ts';
import session from './plugins/session.ts';
import workspaceAccess from './workspaces/workspace-access.ts';
import adminOperatorRoutes from './routes/admin-operators.ts';
import auditRoutes from './routes/audit.ts';
import emailLinkRoutes from './routes/email-links.ts';
import healthRoutes from './routes/health.ts';
import invitationRoutes from './routes/invitations.ts';
import jobRoutes from './routes/jobs.ts';
import keyRoutes from './routes/keys.ts';
import memberRoutes from './routes/members.ts';
import operatorRoutes from './routes/operators.ts';
import playgroundRoutes from './routes/playground.ts';
import reauthRoutes from './routes/reauth.ts';
import retentionRoutes from './routes/retention.ts';
import signInRoutes from './routes/sign-in.ts';
import signUpRoutes from './routes/sign-up.ts';
import usageRoutes from './routes/usage.ts';
import watchRoutes from './routes/watches.ts';
import webhookRoutes from './routes/webhooks.ts';
import workspaceRoutes from './routes/workspaces.ts';
import workspaceDeletionRoutes from './routes/workspace-deletion.ts';
import type { DashboardDeps } from './services.ts';
import { createDashboardServices } from './services.ts';

export { CONTENT_SECURITY_POLICY } from './plugins/security-headers.ts';
export type { DashboardDeps } from './services.ts';

const STATIC_ROOT = fileURLToPath(new URL('../static/', import.meta.url));

export async function buildDashboardApp(deps: DashboardDeps): Promise<FastifyInstance> {
  const { config, logger } = deps;
  const app = Fastify({
    // Requests are logged below without query strings: the emailed links carry one-time tokens.
    loggerInstance: logger,
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    // A caller's well-formed X-Request-Id is kept (a proxy's, a test's), and passed to the gateway.
    genReqId: requestIdOf,
    requestIdHeader: false,
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
  const services = await createDashboardServices(deps, app);
  // Mails handed over before close still reach the mail server (bounded by its timeouts).
  app.addHook('onClose', () => services.sendLink.drain());

  await app.register(securityHeaders);
  await app.register(fastifyCookie);
  await app.register(fastifyFormbody);
  await app.register(fastifyStatic, { root: STATIC_ROOT, prefix: '/static/', maxAge: 3_600_000 });
  // Browsers ask for /favicon.ico whatever the page links: the SVG icon under that name too (every
  // browser that asks reads the type from Content-Type), instead of a 404 on every first visit.
  app.get('/favicon.ico', { config: { permission: 'public' } }, (_request, reply) =>
    reply.header('cache-control', 'public, max-age=86400').type('image/svg+xml').sendFile('favicon.svg'),
  );
  await app.register(session, services);
  await app.register(workspaceAccess);
  await app.register(csrf, services);
  await app.register(render, services);
  await app.register(gatewayPerRequest, { gateway: deps.gateway });

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

  for (const routes of [
    healthRoutes,
    signUpRoutes,
    signInRoutes,
    emailLinkRoutes,
    keyRoutes,
    usageRoutes,
    playgroundRoutes,
    jobRoutes,
    watchRoutes,
    webhookRoutes,
    retentionRoutes,
    auditRoutes,
    memberRoutes,
    invitationRoutes,
    workspaceRoutes,
    reauthRoutes,
    operatorRoutes,
    adminOperatorRoutes,
    workspaceDeletionRoutes,
  ]) {
    await app.register(routes, services);
  }
  return app;
}
