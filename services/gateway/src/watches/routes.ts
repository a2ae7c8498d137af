import type { OutputFormat } from '@subx/formats';
import { rateLimitBody } from '../access/rate-limit.ts';
import { checkTranscriptionTier } from '@subx/credits';
import type { IncludeField, TranscriptModeName } from '@subx/public-api';
import { watchOperation } from './operations.ts';
import { accountIdOf, routeOptions, routePath } from '../http/route-context.ts';
import type { RouteRegistrar } from '../http/route-context.ts';
import { admissionOf } from '../http/reservation.ts';

interface CreateWatchBody {
  source: Record<string, unknown>;
  interval_minutes: number;
  backfill: boolean;
  webhook_url?: string;
  language: string;
  format: OutputFormat;
  include_timestamps: boolean;
  include: IncludeField[];
  translate: boolean;
  mode: TranscriptModeName;
}

type WatchParams = { Params: { watch_id: string } };

/** Watches (src/watches/README.md); registered only when the gateway runs the watches module. */
export const registerWatches: RouteRegistrar = (app, ctx) => {
  const watches = ctx.deps.watches;
  if (!watches) return;

  const create = watchOperation('createWatch');
  app.post<{ Body: CreateWatchBody }>(
    routePath(create),
    routeOptions(ctx, create),
    async (request, reply) => {
      const b = request.body;
      const admission = admissionOf(request);
      checkTranscriptionTier(b.mode, admission.account.tier, ctx.pricing);
      const watch = await watches.create(
        admission.account,
        {
          source: b.source,
          interval_minutes: b.interval_minutes,
          backfill: b.backfill,
          ...(b.webhook_url !== undefined ? { webhook_url: b.webhook_url } : {}),
          options: {
            language: b.language,
            format: b.format,
            include_timestamps: b.include_timestamps,
            include: b.include,
            translate: b.translate,
            mode: b.mode,
          },
        },
        request.id,
      );
      await ctx.deps.audit?.record({
        accountId: admission.account.id,
        action: 'watch.created',
        actor: { type: 'key', id: admission.account.keyId ?? null },
        target: { type: 'watch', id: String(watch.watch_id) },
        sourceIp: request.ip,
        details: { source_type: String(b.source.type), interval_minutes: b.interval_minutes },
      });
      return reply
        .code(201)
        .header('location', `/api/v1/watches/${String(watch.watch_id)}`)
        .send({ ...watch, rate_limit: rateLimitBody(admission.rateLimit), request_id: request.id });
    },
  );

  const list = watchOperation('listWatches');
  app.get(routePath(list), routeOptions(ctx, list), async (request) => ({
    ...(await watches.list(accountIdOf(request))),
    request_id: request.id,
  }));

  const get = watchOperation('getWatch');
  app.get<WatchParams>(routePath(get), routeOptions(ctx, get), async (request) => ({
    ...(await watches.get(accountIdOf(request), request.params.watch_id)),
    request_id: request.id,
  }));

  const remove = watchOperation('deleteWatch');
  app.delete<WatchParams>(routePath(remove), routeOptions(ctx, remove), async (request) => {
    const accountId = accountIdOf(request);
    const deleted = await watches.delete(accountId, request.params.watch_id);
    await ctx.deps.audit?.record({
      accountId,
      action: 'watch.deleted',
      actor: { type: 'key', id: request.account?.keyId ?? null },
      target: { type: 'watch', id: request.params.watch_id },
      sourceIp: request.ip,
    });
    return { ...deleted, request_id: request.id };
  });

  const run = watchOperation('runWatch');
  app.post<WatchParams>(routePath(run), routeOptions(ctx, run), async (request) => {
    const admission = admissionOf(request);
    const outcome = await watches.runNow(admission.account, request.params.watch_id);
    return { ...outcome, rate_limit: rateLimitBody(admission.rateLimit), request_id: request.id };
  });
};
