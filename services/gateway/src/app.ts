/**
 * The gateway as a fastify instance (no listen): the public API, its docs, health, and the
 * optional admin routes. Everything it talks to comes in through `deps`.
 */
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import packageJson from '../package.json' with { type: 'json' };
import { DEFAULT_PRICING } from './access/pricing.ts';
import type { GatewayDeps } from './deps.ts';
import { buildOpenApi } from './docs/openapi.ts';
import { captureForIdempotency, finishIdempotency } from './http/access-hooks.ts';
import { createErrorHandler } from './http/errors.ts';
import { installNotFound } from './http/not-found.ts';
import { installReceiveTimeout } from './http/receive-timeout.ts';
import { genReqId } from './http/request-id.ts';
import { compileValidator } from './http/validation.ts';
import { registerDocs } from './routes/docs.ts';
import { registerHealth } from './routes/health.ts';
import { registerBatch } from './routes/v1/batch.ts';
import { registerComments, registerCommentsAnalyze } from './routes/v1/comments.ts';
import type { RouteContext } from './routes/v1/context.ts';
import { registerExtract } from './routes/v1/extract.ts';
import { registerPlaylist } from './routes/v1/playlist.ts';
import { registerSummarize } from './routes/v1/summarize.ts';
import { registerValidate } from './routes/v1/validate.ts';

export type { GatewayDeps } from './deps.ts';

export async function buildApp(deps: GatewayDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const version = deps.version ?? packageJson.version;
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    bodyLimit: config.BODY_LIMIT_BYTES,
    // Every wait has a bound (issue 14 item 5): headers + body must arrive within
    // requestTimeout; idle keep-alive sockets close after keepAliveTimeout. The response side is
    // bounded by the operations' own deadlines (gRPC deadlines, batch/playlist budgets).
    requestTimeout: config.REQUEST_RECEIVE_TIMEOUT_MS,
    keepAliveTimeout: config.CONNECTION_IDLE_TIMEOUT_MS,
    genReqId,
    requestIdHeader: false,
    trustProxy: config.TRUST_PROXY,
    // HEAD would run (and count) authenticated GETs; without it HEAD is a 405 like any other method.
    exposeHeadRoutes: false,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true },
  }) as unknown as FastifyInstance;

  installReceiveTimeout(app, config.REQUEST_RECEIVE_TIMEOUT_MS);
  app.decorateRequest('admission', null);
  app.decorateRequest('idempotencyKey', null);
  app.setValidatorCompiler(({ schema, httpPart }) =>
    compileValidator(schema as Record<string, unknown>, httpPart),
  );
  // JSON only: without this fastify would accept text/plain bodies as strings.
  app.removeContentTypeParser('text/plain');
  app.setErrorHandler(createErrorHandler(config.BODY_LIMIT_BYTES));
  installNotFound(app);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.addHook('onSend', async (request, reply, payload) => {
    captureForIdempotency(request, reply, payload);
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    // A 5xx does not count against the daily limit (decisions.md "What counts").
    if (request.admission && reply.statusCode >= 500) {
      await request.admission.refund().catch((err: unknown) => request.log.error({ err }, 'refund failed'));
    }
    await finishIdempotency(deps.idempotency, request).catch((err: unknown) =>
      request.log.error({ err }, 'storing the idempotent response failed'),
    );
  });

  const ctx: RouteContext = { deps, pricing: deps.pricing ?? DEFAULT_PRICING };
  registerExtract(app, ctx);
  registerBatch(app, ctx);
  registerPlaylist(app, ctx);
  registerValidate(app, ctx);
  registerSummarize(app, ctx);
  registerComments(app, ctx);
  registerCommentsAnalyze(app, ctx);
  registerHealth(app, ctx, version);
  registerDocs(app, buildOpenApi(version));
  if (deps.adminRoutes) await app.register(deps.adminRoutes);

  await app.ready();
  return app;
}
