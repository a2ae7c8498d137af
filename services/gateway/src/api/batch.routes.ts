import type { OutputFormat } from '@subx/formats';
import { jobChunking, withItemChunks } from '@subx/public-api';
import { perItemTimeoutMs } from '@subx/fanout';
import { checkTranscriptionTier, durationsFrom, itemCharges } from '@subx/credits';
import type { IncludeField, TranscriptModeName } from '@subx/public-api';
import { apiOperation } from './operations.ts';
import { tryVideoIdOf } from '@subx/public-api';
import { routeOptions } from '../http/route-context.ts';
import type { RouteRegistrar } from '../http/route-context.ts';
import { admissionOf, withReservation } from '../http/reservation.ts';
import { modelSecondsUpFront, withModelBudget } from '@subx/credits';
import { extractItems, settleItems } from './fan-out-items.ts';

interface BatchBody {
  urls: string[];
  language: string;
  format: OutputFormat;
  include_timestamps: boolean;
  include: IncludeField[];
  translate: boolean;
  mode: TranscriptModeName;
  chunking?: { max_tokens?: number; overlap_tokens?: number; split?: 'chapters' | 'none' };
}

export const registerBatch: RouteRegistrar = (app, ctx) => {
  const spec = apiOperation('batch');
  const { credits, fanOut, clock, config, backends } = ctx.deps;

  app.post<{ Body: BatchBody }>(spec.path, routeOptions(ctx, spec), async (request) => {
    const body = request.body;
    // Checked before anything is reserved: chunks need timed json items.
    const chunking = jobChunking(body);
    const { account } = admissionOf(request);
    const tierMax = checkTranscriptionTier(body.mode, account.tier, ctx.pricing);
    // A batch is answered while the client waits: extract's cap on audio applies to its items too.
    const maxAudioSeconds = Math.min(tierMax, config.TRANSCRIBE_SYNC_MAX_SECONDS);
    const started = performance.now();
    const items = body.urls.map((url) => ({ url, videoId: tryVideoIdOf(url) }));
    // Worst case: every accepted video URL succeeds (with `mode`, transcribed to its full length).
    // URLs that are not video URLs are INVALID_URL items that cannot cost anything.
    const charges = await itemCharges(
      items.map((item) => item.videoId),
      { translate: body.translate, mode: body.mode, capSeconds: maxAudioSeconds },
      ctx.pricing,
      durationsFrom(
        backends.extractor,
        request.id,
        Math.min(config.GRPC_DEADLINE_MS, config.BATCH_TIMEOUT_MS),
      ),
    );
    return withReservation(credits, request, 'batch', charges.total, async (reservation) => {
      // The model's daily budget: items asking for audio take its length, settled on what was made.
      const outcome = await withModelBudget(
        ctx.modelBudget,
        account,
        modelSecondsUpFront(body.mode, charges.audioSeconds),
        () =>
          extractItems(fanOut, request, items, {
            language: body.language,
            include: body.include,
            translate: body.translate,
            mode: body.mode,
            maxAudioSeconds,
            tier: account.tier,
            charges,
            format: body.format,
            includeTimestamps: body.include_timestamps,
            totalTimeoutMs: Math.max(0, config.BATCH_TIMEOUT_MS - Math.round(performance.now() - started)),
            itemTimeoutMs: perItemTimeoutMs(
              config.BATCH_TIMEOUT_MS,
              items.length,
              config.FANOUT_MIN_ITEM_TIMEOUT_MS,
            ),
          }),
        (result) => result.modelSeconds,
      );
      const settled = await settleItems(request, reservation, outcome, items.length, { clock });
      return chunking ? { ...settled, results: withItemChunks(settled.results, chunking) } : settled;
    });
  });
};
