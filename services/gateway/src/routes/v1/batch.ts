import type { OutputFormat } from '@subx/formats';
import { chunksOfItem, jobChunking } from '../../jobs/chunks.ts';
import { itemsPrice } from '../../access/pricing.ts';
import { perItemTimeoutMs } from '../../fanout/types.ts';
import type { IncludeField } from '../../schemas/common.ts';
import { operationById } from '../../schemas/operations.ts';
import { tryVideoIdOf } from '../../video-urls.ts';
import { routeOptions } from './context.ts';
import type { RouteRegistrar } from './context.ts';
import { withReservation } from './reservation.ts';
import { extractItems, settleItems } from './fan-out-items.ts';

interface BatchBody {
  urls: string[];
  language: string;
  format: OutputFormat;
  include_timestamps: boolean;
  include: IncludeField[];
  translate: boolean;
  chunking?: { max_tokens?: number; overlap_tokens?: number; split?: 'chapters' | 'none' };
}

export const registerBatch: RouteRegistrar = (app, ctx) => {
  const spec = operationById('batch');
  const { credits, fanOut, clock, config } = ctx.deps;

  app.post<{ Body: BatchBody }>(spec.path, routeOptions(ctx, spec), async (request) => {
    const body = request.body;
    // Checked before anything is reserved: chunks need timed json items.
    const chunking = jobChunking(body);
    const items = body.urls.map((url) => ({ url, videoId: tryVideoIdOf(url) }));
    // Worst case: every accepted video URL succeeds. URLs that are not video URLs are INVALID_URL
    // items that cannot cost anything, so no credit is needed for them.
    const payable = items.filter((item) => item.videoId !== null).length;
    return withReservation(
      credits,
      request,
      'batch',
      itemsPrice(payable, ctx.pricing),
      async (reservation) => {
        const outcome = await extractItems(fanOut, request, items, {
          language: body.language,
          include: body.include,
          translate: body.translate,
          format: body.format,
          includeTimestamps: body.include_timestamps,
          totalTimeoutMs: config.BATCH_TIMEOUT_MS,
          itemTimeoutMs: perItemTimeoutMs(
            config.BATCH_TIMEOUT_MS,
            items.length,
            config.FANOUT_MIN_ITEM_TIMEOUT_MS,
          ),
        });
        const settled = await settleItems(request, reservation, outcome, items.length, {
          pricing: ctx.pricing,
          clock,
        });
        if (!chunking) return settled;
        return {
          ...settled,
          results: settled.results.map((item) => {
            const chunks = chunksOfItem(item as Record<string, unknown>, chunking);
            return chunks ? { ...item, chunks } : item;
          }),
        };
      },
    );
  });
};
