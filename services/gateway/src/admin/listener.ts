/**
 * The admin API (/admin/v1) on a listener of its own: ADMIN_HOST:ADMIN_PORT, loopback by default,
 * never the public PORT (which answers 404 for /admin). In Kubernetes it has a Service of its own
 * that no ingress routes, and the NetworkPolicy lets only the dashboard reach it.
 *
 * Wrong or missing tokens are limited per caller (access/admin-failures.ts): 429 with Retry-After
 * after a few failures, before the token is compared (the compare itself stays constant-time).
 *
 * This is where the admin API is mounted (the access module only provides what it manages): the
 * routes of this folder, in one plugin context so the bearer-token hook and error handler of
 * `adminRoutes` cover the self-service routes too. Their request schemas and GET /openapi.json (no
 * token: it holds no secret) come from the admin operation table (admin/operations.ts).
 */
import Fastify from 'fastify';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { Errors } from '@subx/errors';
import { portInUse } from '@subx/service-kit';
import { createAdminFailureLimiter } from '../access/admin-failures.ts';
import type { AdminFailureLimiterOptions } from '../access/admin-failures.ts';
import type { AccessModule } from '../access/index.ts';
import { adminRoutes } from './routes.ts';
import { selfServiceRoutes } from './self-service.routes.ts';
import { adminJobRoutes } from './jobs.routes.ts';
import { adminWatchRoutes } from './watches.routes.ts';
import { adminRecoveryRoutes } from './recovery.routes.ts';
import { adminKeyRoutes } from './keys.routes.ts';
import { adminMemberRoutes } from './members.routes.ts';
import { adminAuditRoutes } from './audit.routes.ts';
import { adminRetentionRoutes } from './retention.routes.ts';
import { adminDeletionRoutes } from './deletion.routes.ts';
import type { WorkspaceDeletion } from '../deletion/delete-workspace.ts';
import type { AuditLog, AuditReader } from '../domain/audit-log.ts';
import { createAccountSecurer } from '../recovery/secure-account.ts';
import type { JobsApi, WatchesApi, WebhookSecretsApi } from '@subx/backends';
import { logAccess } from '../http/access-log.ts';
import { createErrorHandler } from '../http/errors.ts';
import { compileValidator } from '../http/validation.ts';
import { buildAdminOpenApi } from './openapi.ts';
import { isAdminOperation } from './operations.ts';
import packageJson from '../../package.json' with { type: 'json' };
import { installNotFound } from '../http/not-found.ts';
import { documentedFrameworkErrors, listenerOptions } from '../http/listener-options.ts';
import type { Config } from '../config.ts';
import type { ListenerConfig } from '../http/listener-options.ts';

/** What the admin API manages and reads, from the access module. */
type AdminAccess = Pick<
  AccessModule,
  | 'accounts'
  | 'usageReader'
  | 'rateLimiter'
  | 'pricing'
  | 'delegations'
  | 'adminToken'
  | 'adminTokenPrevious'
  | 'accountUsage'
  | 'apiKeys'
  | 'members'
  | 'accountProfile'
  | 'clock'
  | 'logger'
> &
  Partial<Pick<AccessModule, 'retention'>>;

export interface AdminAppOptions {
  config: ListenerConfig;
  access: AdminAccess;
  /** The public API, through which the playground's calls on behalf of an account run. */
  publicApp: FastifyInstance;
  /** The bulk jobs, listed per account for the dashboard; absent: no jobs route. */
  jobs?: JobsApi;
  /** The watches, listed (and deleted) per account for the dashboard; absent: no watches routes. */
  watches?: WatchesApi;
  /** The account's webhook signing secret for the dashboard (read, rotate); without it those routes answer 503. */
  webhookSecrets?: WebhookSecretsApi;
  /** The accounts' audit log: what operators change is recorded, its pages read; absent: those routes answer 503. */
  audit?: AuditLog & AuditReader;
  /** Deleting a workspace (src/deletion/); absent: DELETE /admin/v1/accounts/{id} answers 503. */
  deletion?: WorkspaceDeletion;
  logger?: FastifyBaseLogger;
  /** Failed-attempt limit (default 5 per minute per caller). */
  failures?: AdminFailureLimiterOptions;
  /** The version /openapi.json names (default the gateway package's). */
  version?: string;
}

/** The document's path: served without the token, and outside the failed-token accounting. */
const OPENAPI_PATH = '/openapi.json';

export async function buildAdminApp(options: AdminAppOptions): Promise<FastifyInstance> {
  const { config } = options;
  const app = Fastify({
    ...listenerOptions(config, options.logger),
    // The dashboard calls this port directly: the caller is the socket's peer, never a header.
    trustProxy: false,
    ...documentedFrameworkErrors(config, () => app.log),
  }) as unknown as FastifyInstance;

  // A route that is not a row of the operation table would be undocumented and unvalidated: refused.
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (route.url !== OPENAPI_PATH && !isAdminOperation(method, route.url)) {
        throw new Error(`${method} ${route.url} is not in the admin operation table (admin/operations.ts)`);
      }
    }
  });
  const failures = createAdminFailureLimiter(options.failures);
  app.setErrorHandler(createErrorHandler(config.BODY_LIMIT_BYTES));
  // The public API's validator: no type coercion of bodies, strict numbers in query strings.
  app.setValidatorCompiler(({ schema, httpPart }) =>
    compileValidator(schema as Record<string, unknown>, httpPart),
  );
  installNotFound(app);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // Unknown paths and the document never reach the token check; they do not count (nor are they
    // blocked): a 200 for the document must not give a wrong token's attempt back.
    if (request.routeOptions.url === undefined || request.routeOptions.url === OPENAPI_PATH) return;
    const retryAfter = failures.begin(request.ip);
    if (retryAfter !== null) {
      // The admin plugin's error handler writes the body; the header is set here.
      reply.header('retry-after', String(retryAfter));
      throw Errors.rateLimited(
        `Too many failed admin token attempts from this address. Retry in ${retryAfter} s.`,
        retryAfter,
      );
    }
  });
  app.addHook('onResponse', async (request, reply) => {
    logAccess(request, reply);
    // Anything but a rejected token (401) or this limit's own 429 gives the attempt back.
    const url = request.routeOptions.url;
    if (url !== undefined && url !== OPENAPI_PATH && reply.statusCode !== 401 && reply.statusCode !== 429) {
      failures.succeeded(request.ip);
    }
  });
  const openapi = JSON.stringify(buildAdminOpenApi(options.version ?? packageJson.version));
  app.get(OPENAPI_PATH, async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(openapi),
  );
  const { access, publicApp } = options;
  const audit = options.audit ? { audit: options.audit } : {};
  // Full paths under /admin/v1: registered WITHOUT a prefix.
  await app.register(async (scope) => {
    await adminRoutes(scope, {
      accounts: access.accounts,
      adminToken: access.adminToken,
      ...(access.adminTokenPrevious ? { adminTokenPrevious: access.adminTokenPrevious } : {}),
      usageReader: access.usageReader,
      accountUsage: access.accountUsage,
      clock: access.clock,
      logger: access.logger,
      ...audit,
    });
    selfServiceRoutes(scope, {
      accounts: access.accounts,
      rateLimiter: access.rateLimiter,
      pricing: access.pricing,
      delegations: access.delegations,
      publicApp,
      ...(options.webhookSecrets ? { webhookSecrets: options.webhookSecrets } : {}),
      ...audit,
    });
    adminKeyRoutes(scope, { apiKeys: access.apiKeys });
    adminMemberRoutes(scope, { members: access.members });
    if (options.jobs) adminJobRoutes(scope, { accounts: access.accounts, jobs: options.jobs });
    if (options.watches) {
      adminWatchRoutes(scope, { accounts: access.accounts, watches: options.watches, ...audit });
    }
    adminAuditRoutes(scope, { accounts: access.accounts, ...audit });
    if (access.retention) adminRetentionRoutes(scope, { retention: access.retention });
    adminDeletionRoutes(scope, {
      ...(options.deletion ? { deletion: options.deletion } : {}),
      accountProfile: access.accountProfile,
      exportSources: {
        apiKeys: access.apiKeys,
        members: access.members,
        usage: access.usageReader,
        ...(options.webhookSecrets ? { webhookSecrets: options.webhookSecrets } : {}),
        ...(options.watches ? { watches: options.watches } : {}),
        ...(options.jobs ? { jobs: options.jobs } : {}),
        ...audit,
      },
      ...audit,
      clock: access.clock,
    });
    adminRecoveryRoutes(scope, {
      secure: createAccountSecurer({
        accounts: access.accounts,
        apiKeys: access.apiKeys,
        ...(options.jobs ? { jobs: options.jobs } : {}),
        ...(options.watches ? { watches: options.watches } : {}),
        ...(options.webhookSecrets ? { webhookSecrets: options.webhookSecrets } : {}),
      }),
    });
  });
  await app.ready();
  return app;
}

/** Listens on ADMIN_HOST:ADMIN_PORT; the URL to call (0.0.0.0 is reached on 127.0.0.1). */
export async function listenAdmin(
  app: FastifyInstance,
  config: Pick<Config, 'ADMIN_PORT' | 'ADMIN_HOST'>,
): Promise<{ url: string; port: number }> {
  try {
    await app.listen({ port: config.ADMIN_PORT, host: config.ADMIN_HOST });
  } catch (err) {
    throw portInUse(err, 'ADMIN_PORT', config.ADMIN_PORT);
  }
  const port = (app.server.address() as { port: number }).port;
  const host =
    config.ADMIN_HOST === '0.0.0.0' || config.ADMIN_HOST === '::'
      ? '127.0.0.1'
      : config.ADMIN_HOST.includes(':')
        ? `[${config.ADMIN_HOST}]`
        : config.ADMIN_HOST;
  return { url: `http://${host}:${port}`, port };
}
