/**
 * The gateway as a fastify instance (no listen): the public API, its docs and health. The admin
 * API is not here: it has a listener of its own (admin/listener.ts), so /admin answers 404 on the
 * public port. Everything it talks to comes in through `deps`.
 */
import Fastify from 'fastify';
import { observeHttpRequest } from '@subx/service-kit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '@subx/errors';
import packageJson from '../package.json' with { type: 'json' };
import { DEFAULT_PRICING } from '@subx/credits';
import { createModelBudget } from '@subx/credits';
import type { Admission } from './access/types.ts';
import type { GatewayDeps } from './deps.ts';
import { buildOpenApi } from './openapi/openapi.ts';
import { captureForIdempotency, finishIdempotency } from './http/access-hooks.ts';
import { MAX_URL_LENGTH } from './http/client-errors.ts';
import { createErrorHandler } from './http/errors.ts';
import { setCreditsRemainingHeader } from './http/credits-remaining.ts';
import { logAccess } from './http/access-log.ts';
import { acceptEmptyJsonBody } from './http/json-body.ts';
import { installNotFound } from './http/not-found.ts';
import { installReceiveTimeout } from './http/receive-timeout.ts';
import { documentedFrameworkErrors, listenerOptions } from './http/listener-options.ts';
import mcpPlugin from './mcp/index.ts';
import { compileValidator } from './http/validation.ts';
import { registerDocs } from './openapi/docs.routes.ts';
import { registerHealth } from './api/health.routes.ts';
import { registerRoot } from './api/root.routes.ts';
import { OPERATION_SPECS } from './openapi/operations.ts';
import { registerAccount } from './api/account.routes.ts';
import { registerAudit } from './audit/routes.ts';
import { registerBatch } from './api/batch.routes.ts';
import { registerComments, registerCommentsAnalyze } from './api/comments.routes.ts';
import type { RouteContext } from './http/route-context.ts';
import { registerExtract } from './api/extract.routes.ts';
import { registerJobs } from './jobs/routes.ts';
import { registerPlaylist } from './api/playlist.routes.ts';
import { registerSearch } from './api/search.routes.ts';
import { registerSummarize } from './api/summarize.routes.ts';
import { registerValidate } from './api/validate.routes.ts';
import { registerWatches } from './watches/routes.ts';
import { registerWebhooks } from './webhooks/routes.ts';
import { registerKeys } from './keys/routes.ts';
import { registerExport } from './export/routes.ts';
import { registerRetention } from './retention/routes.ts';

export type { GatewayDeps } from './deps.ts';

/** What a response leaves to do: the refund of a 5xx and the Idempotency-Key's record; never throws. */
async function settleAfterResponse(
  request: FastifyRequest,
  deps: GatewayDeps,
  refund: Admission | null,
): Promise<void> {
  await refund?.refund().catch((err: unknown) => request.log.error({ err }, 'refund failed'));
  await finishIdempotency(deps.idempotency, request).catch((err: unknown) =>
    request.log.error({ err }, 'storing the idempotent response failed'),
  );
}

export async function buildApp(deps: GatewayDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const version = deps.version ?? packageJson.version;
  const app = Fastify({
    ...listenerOptions(config, deps.logger),
    trustProxy: config.TRUST_PROXY,
    // Requests the HTTP parser or the router rejects get the documented error body, not fastify's own.
    ...documentedFrameworkErrors(config, () => app.log),
  }) as unknown as FastifyInstance;

  installReceiveTimeout(app, config.REQUEST_RECEIVE_TIMEOUT_MS);
  app.decorateRequest('admission', null);
  app.decorateRequest('account', null);
  app.decorateRequest('idempotencyKey', null);
  app.setValidatorCompiler(({ schema, httpPart }) =>
    compileValidator(schema as Record<string, unknown>, httpPart),
  );
  // JSON only: without this fastify would accept text/plain bodies as strings.
  app.removeContentTypeParser('text/plain');
  acceptEmptyJsonBody(app);
  app.setErrorHandler(createErrorHandler(config.BODY_LIMIT_BYTES));
  installNotFound(app, OPERATION_SPECS);

  // The hooks every request runs are callback hooks where they do not wait for anything: an async
  // hook costs a promise and a microtask per request (a profile of the cached extract).
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // Node's parser stops at 16 KB of request line and headers; a URL past 8 KB stops here.
    if (request.url.length > MAX_URL_LENGTH) {
      done(new AppError('URI_TOO_LONG', `The request URL is longer than ${MAX_URL_LENGTH} bytes.`));
      return;
    }
    done();
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    setCreditsRemainingHeader(request, reply);
    captureForIdempotency(request, reply, payload);
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    logAccess(request, reply);
    // Metrics: the route pattern (never the URL), status class, and time to the last byte.
    observeHttpRequest({
      method: request.method,
      route: request.routeOptions.url,
      status: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
    });
    // A 5xx does not count against the daily limit (docs/decisions.md "Identity and access", what
    // counts), and an Idempotency-Key is stored or freed; most requests have neither to do.
    const refund = reply.statusCode >= 500 ? request.admission : null;
    if (refund === null && request.idempotencyKey === null) {
      done();
      return;
    }
    void settleAfterResponse(request, deps, refund).then(() => done());
  });

  const pricing = deps.pricing ?? DEFAULT_PRICING;
  const ctx: RouteContext = {
    deps,
    pricing,
    modelBudget: createModelBudget({ kv: deps.kv, clock: deps.clock, pricing }),
  };
  registerExtract(app, ctx);
  registerBatch(app, ctx);
  registerPlaylist(app, ctx);
  registerSearch(app, ctx);
  registerValidate(app, ctx);
  registerSummarize(app, ctx);
  registerComments(app, ctx);
  registerCommentsAnalyze(app, ctx);
  registerJobs(app, ctx);
  registerWatches(app, ctx);
  registerWebhooks(app, ctx);
  registerKeys(app, ctx);
  registerAccount(app, ctx);
  registerAudit(app, ctx);
  registerExport(app, ctx);
  registerRetention(app, ctx);
  registerHealth(app, ctx, version);
  registerRoot(app, version);
  await registerDocs(app, buildOpenApi(version));
  // The API as MCP tools for AI agents, and /llms.txt (src/mcp/README.md).
  await app.register(mcpPlugin, {
    access: deps.access,
    readLimiter: deps.readLimiter,
    version,
    pricing: ctx.pricing,
  });

  await app.ready();
  return app;
}
