import type { FastifyReply, FastifyRequest } from 'fastify';
import { CONTENT_TYPES, answerHeadJson } from '@subx/formats';
import type { OutputFormat } from '@subx/formats';
import { countCacheLookup } from '@subx/service-kit';
import { rateLimitJson } from '../../access/rate-limit.ts';
import { extractPrice, modelTranslationPrice } from '../../access/pricing.ts';
import {
  completeJsonBody,
  createExtractCache,
  jsonHead,
  jsonHeadAround,
  jsonTail,
  kept,
  sentOnce,
  utf8Bytes,
} from '../../extract-cache.ts';
import type { ByteAllocator, CachedExtract, ExtractCacheKey } from '../../extract-cache.ts';
import { documentFor, subtitleTypeName, transcriptBody } from '../../mappers.ts';
import type { IncludeField } from '../../schemas/common.ts';
import { OPERATION_SPECS, operationById } from '../../schemas/operations.ts';
import { videoIdOf } from '../../video-urls.ts';
import { routeOptions } from './context.ts';
import type { RouteRegistrar } from './context.ts';
import { admissionOf, withReservation } from './reservation.ts';
import { extractChunks, wantsChunks, type ChunkingBody } from './extract-chunks.ts';

/** `subx_cache_requests_total{cache="extract_response"}`. */
const CACHE_NAME = 'extract_response';

interface ExtractBody {
  url: string;
  language: string;
  include_timestamps: boolean;
  force_refresh: boolean;
  include: IncludeField[];
  format: OutputFormat;
  translate: boolean;
  chunking?: ChunkingBody;
  embed?: boolean;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** Rendered JSON as a string, from the bytes the extractor sent or as it is. */
const textOf = (json: string | Uint8Array): string =>
  typeof json === 'string'
    ? json
    : Buffer.from(json.buffer, json.byteOffset, json.byteLength).toString('utf8');

/**
 * What fetchRendered gives: a micro-cache entry's shape, or (`whole`) a json body already completed
 * with this request's fields, for an answer that is not kept: rendered in one pass, not rendered
 * and then copied again behind its tail (a second ArrayBuffer's worth of bytes per request, on the
 * path where the garbage collection of such buffers costs the most).
 */
type Rendered = CachedExtract & { whole?: boolean };

export const registerExtract: RouteRegistrar = (app, ctx) => {
  const spec = operationById('extract');
  const { backends, credits, clock, config } = ctx.deps;
  const cache = createExtractCache({
    ttlMs: config.EXTRACT_CACHE_TTL_MS,
    maxBytes: config.EXTRACT_CACHE_MAX_BYTES,
    clock,
  });

  /** The answer from the extractor, rendered; stored for the next request unless it has no time. */
  async function fetchRendered(
    request: FastifyRequest,
    body: ExtractBody,
    key: ExtractCacheKey,
    onModelTranslation?: () => void,
  ): Promise<Rendered> {
    // A json answer with timestamps carries the segments as the extractor rendered them, spliced
    // in as they came (the extractor renders them once per cached transcript).
    const spliceSegments = body.format === 'json' && body.include_timestamps;
    const transcript = await backends.extractor.getTranscript(
      {
        videoId: key.videoId,
        language: body.language,
        include: body.include,
        forceRefresh: body.force_refresh,
        translate: body.translate,
        segmentsAsJson: spliceSegments,
        // ...as bytes, copied into the answer as they come (an older extractor answers a string).
        segmentsJsonAsBytes: spliceSegments,
        // ...and the members before them (video_id, metadata, language, subtitle_type) rendered
        // too, once per cached transcript: no metadata to decode and render per request.
        headJsonAsBytes: spliceSegments,
        mode: 0,
      },
      { requestId: request.id },
    );
    if (transcript.translatedFrom && transcript.translatedBy === 'model' && !transcript.cached)
      onModelTranslation?.();
    if (body.format !== 'json') {
      const document = documentFor(body.format, transcript, body.include_timestamps);
      const rendered = {
        contentType: CONTENT_TYPES[body.format],
        payload: utf8Bytes(document, cache ? kept : sentOnce),
      };
      cache?.set(key, rendered);
      return rendered;
    }
    // The members before `subtitles`: as the extractor rendered them, or (an older extractor, or
    // not asked) rendered here the same way.
    const members =
      transcript.headJsonUtf8.length > 0
        ? transcript.headJsonUtf8
        : answerHeadJson({
            videoId: transcript.videoId || key.videoId,
            metadata: transcript.metadata,
            include: body.include,
            language: transcript.language,
            subtitleType: subtitleTypeName(transcript.subtitleType),
          });
    const after = (cached: boolean) => ({
      cached,
      extracted_at: transcript.fetchedAt || new Date(clock.now()).toISOString(),
      ...(transcript.translatedFrom ? { translated_from: transcript.translatedFrom } : {}),
      ...(transcript.translatedFrom && transcript.translatedBy
        ? { translated_by: transcript.translatedBy }
        : {}),
      ...(transcript.languageConfidence ? { language_confidence: transcript.languageConfidence } : {}),
    });
    // The extractor's rendered segments, as bytes or (an older extractor) as a string; from an
    // extractor older than segments_as_json, segments: rendered here.
    const rendered =
      transcript.segmentsJsonUtf8.length > 0 ? transcript.segmentsJsonUtf8 : transcript.segmentsJson;
    // The head, or with `tail` the whole body.
    const head =
      spliceSegments && rendered.length > 0
        ? (cached: boolean, alloc: ByteAllocator, tail = '') =>
            jsonHeadAround(members, 'subtitles', rendered, after(cached), alloc, tail)
        : (cached: boolean, alloc: ByteAllocator, tail = '') =>
            utf8Bytes(
              `{${textOf(members)},${jsonHead({
                ...transcriptBody(transcript, body.include_timestamps),
                ...after(cached),
              }).slice(1)}${tail}`,
              alloc,
            );
    // Without the extractor's fetch time the answer would carry this request's time; such an
    // answer is not kept. A hit is an answer from a cache: `cached: true`, like the extractor's.
    if (!cache || !transcript.fetchedAt) {
      const tail = jsonTail(rateLimitJson(admissionOf(request).rateLimit), request.id);
      return { contentType: JSON_TYPE, payload: head(transcript.cached, sentOnce, tail), whole: true };
    }
    const answer = { contentType: JSON_TYPE, payload: head(transcript.cached, kept) };
    cache.set(key, transcript.cached ? answer : { contentType: JSON_TYPE, payload: head(true, kept) });
    return answer;
  }

  /** The answer to send, the rendered bytes completed with this request's fields. */
  function respond(
    request: FastifyRequest,
    reply: FastifyReply,
    body: ExtractBody,
    rendered: Rendered,
  ): Buffer {
    reply.type(rendered.contentType);
    if (body.format !== 'json' || rendered.whole) return rendered.payload;
    return completeJsonBody(rendered.payload, rateLimitJson(admissionOf(request).rateLimit), request.id);
  }

  /**
   * Returned, not sent: a priced extract commits its reservation before the answer goes out. A hit
   * is returned as it is, not as a promise: fastify sends a handler's plain value at once, where a
   * promise costs its allocation and a turn of the microtask queue on the hottest path there is.
   */
  function extract(
    request: FastifyRequest,
    reply: FastifyReply,
    body: ExtractBody,
    onModelTranslation?: () => void,
  ): Buffer | Promise<Buffer> {
    const key: ExtractCacheKey = {
      videoId: videoIdOf(body.url),
      language: body.language,
      include: body.include,
      translate: body.translate,
      format: body.format,
      includeTimestamps: body.include_timestamps,
    };
    // force_refresh skips the lookup; its fresh answer replaces the entry.
    if (cache && !body.force_refresh) {
      const hit = cache.get(key);
      countCacheLookup(CACHE_NAME, hit !== undefined);
      if (hit) return respond(request, reply, body, hit);
    }
    return fetchRendered(request, body, key, onModelTranslation).then((rendered) =>
      respond(request, reply, body, rendered),
    );
  }

  /** Extract with chunks (and embeddings): built per request, in a room of its own. */
  async function chunked(request: FastifyRequest, reply: FastifyReply, body: ExtractBody): Promise<string> {
    const price = extractPrice(ctx.pricing);
    const translation = body.translate ? modelTranslationPrice(ctx.pricing) : 0;
    const answer =
      price + translation === 0
        ? await extractChunks(ctx, ctx.deps.embedder, request, body)
        : await withReservation(credits, request, 'extract', price + translation, async (reservation) => {
            let byModel = false;
            const built = await extractChunks(ctx, ctx.deps.embedder, request, body, () => {
              byModel = true;
            });
            await reservation.commit(price + (byModel ? translation : 0));
            return built;
          });
    reply.type(JSON_TYPE);
    return answer;
  }

  function handle(
    request: FastifyRequest,
    reply: FastifyReply,
    body: ExtractBody,
  ): Buffer | Promise<Buffer> | Promise<string> {
    if (wantsChunks(body)) return chunked(request, reply, body);
    const price = extractPrice(ctx.pricing);
    // A translation may be made by a model (the platform refusing), which costs more: reserved up
    // front, committed only when this request had the model translate.
    const translation = body.translate ? modelTranslationPrice(ctx.pricing) : 0;
    // The interface prices extract at 0: no ledger round trip unless an operator sets a price.
    if (price + translation === 0) return extract(request, reply, body);
    return withReservation(credits, request, 'extract', price + translation, async (reservation) => {
      let byModel = false;
      const result = await extract(request, reply, body, () => {
        byModel = true;
      });
      await reservation.commit(price + (byModel ? translation : 0));
      return result;
    });
  }

  app.post<{ Body: ExtractBody }>(spec.path, routeOptions(ctx, spec), (request, reply) =>
    handle(request, reply, request.body),
  );
  // POST /api/v1/extract.srt and its siblings: the same, with the format the path names.
  for (const row of OPERATION_SPECS.filter((o) => o.document && o.path.startsWith(`${spec.path}.`))) {
    const format = row.document!;
    app.post<{ Body: Omit<ExtractBody, 'format'> }>(row.path, routeOptions(ctx, row), (request, reply) =>
      handle(request, reply, { ...request.body, format }),
    );
  }
};
