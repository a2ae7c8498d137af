import { commentsV1 } from '@subx/contracts';
import type { aiV1 } from '@subx/contracts';
import { commentsAnalyzePrice, commentsPrice } from '@subx/credits';
import { rateLimitBody } from '../access/rate-limit.ts';
import { commentJson, sentimentName } from '@subx/public-api';
import { apiOperation } from './operations.ts';
import { videoIdOf, videoUrlOfBody } from '@subx/public-api';
import { routeOptions } from '../http/route-context.ts';
import type { RouteRegistrar } from '../http/route-context.ts';
import { admissionOf, withReservation } from '../http/reservation.ts';

export const registerComments: RouteRegistrar = (app, ctx) => {
  const spec = apiOperation('comments');
  const { credits, backends } = ctx.deps;

  app.get<{ Querystring: { url: string; max: number; sort: 'relevance' | 'time' } }>(
    spec.path,
    routeOptions(ctx, spec),
    async (request) => {
      const { max, sort } = request.query;
      const videoId = videoIdOf(request.query.url);
      const ask = {
        videoId,
        max,
        sort:
          sort === 'time'
            ? commentsV1.CommentSort.COMMENT_SORT_TIME
            : commentsV1.CommentSort.COMMENT_SORT_RELEVANCE,
        forceRefresh: false,
      };
      const toBody = (r: commentsV1.GetCommentsResponse, charge: number) => {
        const comments = r.commentsDisabled ? [] : r.comments.slice(0, max).map(commentJson);
        return {
          comments,
          video_id: r.videoId || videoId,
          comment_count: comments.length,
          comments_disabled: r.commentsDisabled,
          cached: r.cached,
          credits_used: charge,
          rate_limit: rateLimitBody(admissionOf(request).rateLimit),
          request_id: request.id,
        };
      };
      // A cached listing costs 0 (docs/decisions.md "Credits"): served without a reservation, whatever the balance.
      const look = await backends.comments.getComments(
        { ...ask, cachedOnly: true },
        { requestId: request.id },
      );
      if (look.cached) return toBody(look, 0);
      // Worst case: `max` comments, none cached.
      return withReservation(
        credits,
        request,
        'comments',
        commentsPrice(max, {}, ctx.pricing),
        async (reservation) => {
          const r = await backends.comments.getComments(
            { ...ask, cachedOnly: false },
            { requestId: request.id },
          );
          const charge = commentsPrice(
            r.commentsDisabled ? 0 : Math.min(r.comments.length, max),
            { cached: r.cached, disabled: r.commentsDisabled },
            ctx.pricing,
          );
          await reservation.commit(charge, { attributes: { video_id: videoId } });
          return toBody(r, charge);
        },
      );
    },
  );
};

export const registerCommentsAnalyze: RouteRegistrar = (app, ctx) => {
  const spec = apiOperation('analyzeComments');
  const { credits, backends, config } = ctx.deps;

  app.post<{ Body: { url?: string; video_url?: string; sample_size: number; language?: string } }>(
    spec.path,
    routeOptions(ctx, spec),
    async (request) => {
      const videoId = videoIdOf(videoUrlOfBody(request.body));
      const call = { requestId: request.id, deadlineMs: config.AI_GRPC_DEADLINE_MS };
      const ask = { videoId, sampleSize: request.body.sample_size, language: request.body.language ?? '' };
      const toBody = (a: aiV1.AnalyzeCommentsResponse, charge: number) => ({
        sentiment: sentimentName(a.sentiment),
        themes: a.themes.slice(0, 5),
        key_quotes: a.keyQuotes.slice(0, 10).map((q) => ({ text: q.text, author: q.author })),
        video_id: a.videoId || videoId,
        sample_size: a.sampleSize,
        total_comments: Number(a.totalComments),
        credits_used: charge,
        cached: a.cached,
        // Which engine analysed: the model name, or local-lexicon for the offline fallback.
        model: a.model,
        rate_limit: rateLimitBody(admissionOf(request).rateLimit),
        request_id: request.id,
      });
      // A cached analysis costs 0: served without a reservation, whatever the balance.
      const look = await backends.ai.analyzeComments({ ...ask, cachedOnly: true }, call);
      if (look.cached) return toBody(look, 0);
      const price = commentsAnalyzePrice({}, ctx.pricing);
      return withReservation(credits, request, 'comments_analyze', price, async (reservation) => {
        const a = await backends.ai.analyzeComments({ ...ask, cachedOnly: false }, call);
        const charge = commentsAnalyzePrice({ cached: a.cached }, ctx.pricing);
        await reservation.commit(charge, { attributes: { video_id: videoId } });
        return toBody(a, charge);
      });
    },
  );
};
