import { aiV1 } from '@subx/contracts';
import { summarizePrice } from '@subx/credits';
import { rateLimitBody } from '../access/rate-limit.ts';
import { apiOperation } from './operations.ts';
import { videoIdOf, videoUrlOfBody } from '@subx/public-api';
import { routeOptions } from '../http/route-context.ts';
import type { RouteRegistrar } from '../http/route-context.ts';
import { admissionOf, withReservation } from '../http/reservation.ts';

type Style = 'brief' | 'detailed' | 'key_points';

const STYLES: Record<Style, aiV1.SummaryStyle> = {
  brief: aiV1.SummaryStyle.SUMMARY_STYLE_BRIEF,
  detailed: aiV1.SummaryStyle.SUMMARY_STYLE_DETAILED,
  key_points: aiV1.SummaryStyle.SUMMARY_STYLE_KEY_POINTS,
};

/** Longer than the 24 h summary cache, so a marker outlives the entry it pays for. */
const PAID_MARKER_TTL_MS = 25 * 60 * 60 * 1000;

/** One marker per (user, cache entry); the entry is identified by (video, style, generated_at). */
const summaryPaidKey = (accountId: string, videoId: string, style: string, generatedAt: string) =>
  `summary-paid:${accountId}:${videoId}:${style}:${generatedAt}`;

/**
 * Summaries are priced before any work: a cache-only look at the AI service answers either the
 * cached summary (with its `generated_at`) or, on a miss, the video's duration and the caption
 * language that would be read. So (docs/decisions.md "Summary charging"):
 * - a cache entry this user already paid for is served for 0 credits without touching the ledger,
 *   whatever their balance;
 * - otherwise exactly the price of that duration is reserved (a 2-credit video needs 2 credits,
 *   not the worst case of 6), and the 402 names that price and the real balance.
 */
export const registerSummarize: RouteRegistrar = (app, ctx) => {
  const spec = apiOperation('summarize');
  const { credits, backends, kv, config } = ctx.deps;

  app.post<{ Body: { url?: string; video_url?: string; style: Style; language?: string } }>(
    spec.path,
    routeOptions(ctx, spec),
    async (request) => {
      const { style } = request.body;
      const videoId = videoIdOf(videoUrlOfBody(request.body));
      const accountId = admissionOf(request).account.id;
      const call = { requestId: request.id, deadlineMs: config.AI_GRPC_DEADLINE_MS };
      const ask = { videoId, style: STYLES[style], language: request.body.language ?? '' };

      const toBody = (s: aiV1.SummarizeResponse, charge: number) => ({
        summary: s.summary,
        video_id: s.videoId || videoId,
        credits_used: charge,
        cached: s.cached,
        video_metadata: { title: s.videoTitle, duration: s.videoDuration, channel: s.videoChannel },
        timestamps: s.timestamps.map((t) => ({ seconds: t.seconds, topic: t.topic, text: t.text })),
        // Which engine wrote this: the model name, or local-extractive for the offline fallback.
        model: s.model,
        language: s.language,
        rate_limit: rateLimitBody(admissionOf(request).rateLimit),
        request_id: request.id,
      });

      const look = await backends.ai.summarize({ ...ask, cachedOnly: true }, call);
      const paidMarker = (r: aiV1.SummarizeResponse) =>
        summaryPaidKey(accountId, r.videoId || videoId, style, r.generatedAt);
      // A cached entry this user already paid for: free, and no reservation (a balance of 0 is fine).
      if (look.cached && (await kv.get(paidMarker(look))) !== null) return toBody(look, 0);

      // The duration from the look prices the work before it is done.
      return withReservation(
        credits,
        request,
        'summarize',
        summarizePrice(look.videoDuration, ctx.pricing),
        async (reservation) => {
          const s = look.cached
            ? look
            : await backends.ai.summarize({ ...ask, language: look.language, cachedOnly: false }, call);
          const marker = paidMarker(s);
          // SET NX: of two concurrent requests of the same user for the same entry, exactly one pays.
          const firstForUser = await kv.setIfAbsent(marker, String(Date.now()), {
            ttlMs: PAID_MARKER_TTL_MS,
          });
          // Never more than reserved: a duration that changed between the look and the work
          // cannot make the user pay more than the price they were quoted.
          const charge = firstForUser
            ? Math.min(summarizePrice(s.videoDuration, ctx.pricing), reservation.reserved)
            : 0;
          try {
            await reservation.commit(charge, { attributes: { video_id: videoId, style } });
          } catch (error) {
            // The user did not pay after all: the next request must not be free.
            if (firstForUser) await kv.delete(marker);
            throw error;
          }
          return toBody(s, charge);
        },
      );
    },
  );
};
