import { aiV1 } from '@subx/contracts';
import { summarizeMaxPrice, summarizePrice } from '../../access/pricing.ts';
import { operationById } from '../../schemas/operations.ts';
import { videoIdOf } from '../../video-urls.ts';
import { routeOptions } from './context.ts';
import type { RouteRegistrar } from './context.ts';
import { admissionOf, withReservation } from './credits.ts';

type Style = 'brief' | 'detailed' | 'key_points';

const STYLES: Record<Style, aiV1.SummaryStyle> = {
  brief: aiV1.SummaryStyle.SUMMARY_STYLE_BRIEF,
  detailed: aiV1.SummaryStyle.SUMMARY_STYLE_DETAILED,
  key_points: aiV1.SummaryStyle.SUMMARY_STYLE_KEY_POINTS,
};

/** Longer than the 24 h summary cache, so a marker outlives the entry it pays for. */
const PAID_MARKER_TTL_MS = 25 * 60 * 60 * 1000;

/** One marker per (user, cache entry); the entry is identified by (video, style, generated_at). */
export const summaryPaidKey = (accountId: string, videoId: string, style: string, generatedAt: string) =>
  `summary-paid:${accountId}:${videoId}:${style}:${generatedAt}`;

export const registerSummarize: RouteRegistrar = (app, ctx) => {
  const spec = operationById('summarize');
  const { credits, backends, kv, config } = ctx.deps;

  app.post<{ Body: { video_url: string; style: Style } }>(
    spec.path,
    routeOptions(ctx, spec),
    async (request) => {
      const { style } = request.body;
      const videoId = videoIdOf(request.body.video_url);
      const accountId = admissionOf(request).account.id;
      // The price depends on the duration, known only after the call: reserve the most expensive step.
      return withReservation(
        credits,
        request,
        'summarize',
        summarizeMaxPrice(ctx.pricing),
        async (reservation) => {
          const s = await backends.ai.summarize(
            { videoId, style: STYLES[style], language: 'en' },
            { requestId: request.id, deadlineMs: config.AI_GRPC_DEADLINE_MS },
          );
          const marker = summaryPaidKey(accountId, s.videoId || videoId, style, s.generatedAt);
          // SET NX: of two concurrent requests of the same user for the same entry, exactly one pays.
          const firstForUser = await kv.setIfAbsent(marker, String(Date.now()), {
            ttlMs: PAID_MARKER_TTL_MS,
          });
          const charge = firstForUser ? summarizePrice(s.videoDuration, ctx.pricing) : 0;
          try {
            await reservation.commit(charge, { attributes: { video_id: videoId, style } });
          } catch (error) {
            if (firstForUser) await kv.delete(marker);
            throw error;
          }
          return {
            summary: s.summary,
            video_id: s.videoId || videoId,
            credits_used: charge,
            cached: s.cached,
            video_metadata: { title: s.videoTitle, duration: s.videoDuration, channel: s.videoChannel },
            timestamps: s.timestamps.map((t) => ({ seconds: t.seconds, topic: t.topic, text: t.text })),
            // Which engine wrote this: the model name, or local-extractive for the offline fallback.
            model: s.model,
          };
        },
      );
    },
  );
};
