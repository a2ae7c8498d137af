import type { FastifyReply, FastifyRequest } from 'fastify';
import { CONTENT_TYPES } from '@subx/formats';
import type { OutputFormat } from '@subx/formats';
import { rateLimitBody } from '../../access/rate-limit.ts';
import { extractPrice } from '../../access/pricing.ts';
import { documentFor, metadataJson, subtitleTypeName, transcriptBody } from '../../mappers.ts';
import type { IncludeField } from '../../schemas/common.ts';
import { operationById } from '../../schemas/operations.ts';
import { videoIdOf } from '../../video-urls.ts';
import { routeOptions } from './context.ts';
import type { RouteRegistrar } from './context.ts';
import { admissionOf, withReservation } from './credits.ts';

interface ExtractBody {
  url: string;
  language: string;
  include_timestamps: boolean;
  force_refresh: boolean;
  include: IncludeField[];
  format: OutputFormat;
  translate: boolean;
}

export const registerExtract: RouteRegistrar = (app, ctx) => {
  const spec = operationById('extract');
  const { backends, credits, clock } = ctx.deps;

  async function extract(request: FastifyRequest, reply: FastifyReply, body: ExtractBody) {
    const videoId = videoIdOf(body.url);
    const transcript = await backends.extractor.getTranscript(
      {
        videoId,
        language: body.language,
        include: body.include,
        forceRefresh: body.force_refresh,
        translate: body.translate,
      },
      { requestId: request.id },
    );
    if (body.format !== 'json') {
      return reply
        .type(CONTENT_TYPES[body.format])
        .send(documentFor(body.format, transcript, body.include_timestamps));
    }
    return {
      video_id: transcript.videoId || videoId,
      metadata: metadataJson(transcript.metadata, body.include),
      language: transcript.language,
      subtitle_type: subtitleTypeName(transcript.subtitleType),
      ...transcriptBody(transcript, body.include_timestamps),
      cached: transcript.cached,
      extracted_at: transcript.fetchedAt || new Date(clock.now()).toISOString(),
      ...(transcript.translatedFrom ? { translated_from: transcript.translatedFrom } : {}),
      rate_limit: rateLimitBody(admissionOf(request).rateLimit),
      request_id: request.id,
    };
  }

  app.post<{ Body: ExtractBody }>(spec.path, routeOptions(ctx, spec), async (request, reply) => {
    const price = extractPrice(ctx.pricing);
    // The interface prices extract at 0: no ledger round trip unless an operator sets a price.
    if (price === 0) return extract(request, reply, request.body);
    return withReservation(credits, request, 'extract', price, async (reservation) => {
      const result = await extract(request, reply, request.body);
      await reservation.commit(price);
      return result;
    });
  });
};
