import { Readable } from 'node:stream';
import { jobChunking } from '@subx/public-api';
import { CONTENT_TYPES } from '@subx/formats';
import type { OutputFormat } from '@subx/formats';
import type { JobServiceInput } from '@subx/backends';
import { checkTranscriptionTier } from '@subx/credits';
import type { IncludeField, TranscriptModeName } from '@subx/public-api';
import { jobOperation } from './operations.ts';
import { rateLimitBody } from '../access/rate-limit.ts';
import { admissionOf } from '../http/reservation.ts';
import { accountIdOf, routeOptions, routePath } from '../http/route-context.ts';
import type { RouteRegistrar } from '../http/route-context.ts';

interface CreateJobBody {
  source: Record<string, unknown>;
  language: string;
  format: OutputFormat;
  include_timestamps: boolean;
  include: IncludeField[];
  translate: boolean;
  mode: TranscriptModeName;
  chunking?: { max_tokens?: number; overlap_tokens?: number; split?: 'chapters' | 'none' };
  webhook_url?: string;
  dry_run: boolean;
}

interface Page {
  limit: number;
  cursor?: string;
}

/** The bulk jobs API (src/jobs/README.md); registered only when the gateway runs the jobs module. */
export const registerJobs: RouteRegistrar = (app, ctx) => {
  const jobs = ctx.deps.jobs;
  if (!jobs) return;
  const { config } = ctx.deps;

  const create = jobOperation('createJob');
  app.post<{ Body: CreateJobBody }>(
    routePath(create),
    { ...routeOptions(ctx, create), bodyLimit: config.JOBS_BODY_LIMIT_BYTES },
    async (request, reply) => {
      const body = request.body;
      const chunking = jobChunking(body);
      const admission = admissionOf(request);
      checkTranscriptionTier(body.mode, admission.account.tier, ctx.pricing);
      const input: JobServiceInput = {
        source: body.source,
        options: {
          language: body.language,
          format: body.format,
          include_timestamps: body.include_timestamps,
          include: body.include,
          translate: body.translate,
          mode: body.mode,
          ...(chunking ? { chunking } : {}),
        },
        ...(body.webhook_url !== undefined ? { webhook_url: body.webhook_url } : {}),
      };
      if (body.dry_run) {
        const estimate = await jobs.estimate(admission.account, input, request.id);
        return { estimate, rate_limit: rateLimitBody(admission.rateLimit), request_id: request.id };
      }
      const job = await jobs.create(admission.account, input, request.id);
      // The one counted job route: its answer carries the daily limit, like every counted answer.
      return reply
        .code(202)
        .header('location', `/api/v1/jobs/${String(job.job_id)}`)
        .send({ ...job, rate_limit: rateLimitBody(admission.rateLimit), request_id: request.id });
    },
  );

  const list = jobOperation('listJobs');
  app.get<{ Querystring: Page }>(routePath(list), routeOptions(ctx, list), async (request) => ({
    ...(await jobs.list(accountIdOf(request), request.query)),
    request_id: request.id,
  }));

  const get = jobOperation('getJob');
  app.get<{ Params: { job_id: string } }>(routePath(get), routeOptions(ctx, get), async (request) => ({
    ...(await jobs.get(accountIdOf(request), request.params.job_id)),
    request_id: request.id,
  }));

  const results = jobOperation('getJobResults');
  app.get<{ Params: { job_id: string }; Querystring: Page }>(
    routePath(results),
    routeOptions(ctx, results),
    async (request) => ({
      ...(await jobs.results(accountIdOf(request), request.params.job_id, request.query)),
      request_id: request.id,
    }),
  );

  const one = jobOperation('getJobResult');
  app.get<{ Params: { job_id: string; index: number } }>(
    routePath(one),
    routeOptions(ctx, one),
    async (request, reply) => {
      const { format, item } = await jobs.result(
        accountIdOf(request),
        request.params.job_id,
        request.params.index,
      );
      if (format === 'json') return { ...item, request_id: request.id };
      const name = `${String(item.video_id ?? request.params.index)}.${format}`;
      return reply
        .type(CONTENT_TYPES[format as OutputFormat])
        .header('content-disposition', `attachment; filename="${name}"`)
        .send(String(item.content ?? ''));
    },
  );

  const chunks = jobOperation('getJobChunks');
  app.get<{ Params: { job_id: string } }>(
    routePath(chunks),
    routeOptions(ctx, chunks),
    async (request, reply) => {
      const lines = await jobs.chunkLines(accountIdOf(request), request.params.job_id);
      return reply.type('application/x-ndjson; charset=utf-8').send(Readable.from(lines));
    },
  );

  const cancel = jobOperation('cancelJob');
  app.delete<{ Params: { job_id: string } }>(
    routePath(cancel),
    routeOptions(ctx, cancel),
    async (request) => ({
      ...(await jobs.cancel(accountIdOf(request), request.params.job_id)),
      request_id: request.id,
    }),
  );
};
