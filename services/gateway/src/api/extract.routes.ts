import type { FastifyReply, FastifyRequest } from 'fastify';
import { CONTENT_TYPES, answerHeadJson } from '@subx/formats';
import type { OutputFormat } from '@subx/formats';
import { countCacheLookup } from '@subx/service-kit';
import { rateLimitJson } from '../access/rate-limit.ts';
import { extractPrice, modelTranslationPrice, transcriptionPrice } from '@subx/credits';
import { audioTooLongForTier, checkTranscriptionTier, overAudioCap, tierAudioCap } from '@subx/credits';
import { withModelBudget } from '@subx/credits';
import { AppError } from '@subx/errors';
import type { extractorV1 } from '@subx/contracts';
import {
  completeJsonBody,
  createExtractCache,
  jsonHead,
  jsonHeadAround,
  jsonTail,
  kept,
  sentOnce,
  utf8Bytes,
} from '../domain/extract-cache.ts';
import type { ByteAllocator, CachedExtract, ExtractCacheKey } from '../domain/extract-cache.ts';
import {
  documentFor,
  subtitleTypeName,
  transcriptBody,
  transcriptProvenance,
  wantsWords,
} from '@subx/public-api';
import type { IncludeField, TranscriptModeName } from '@subx/public-api';
import { V1_OPERATIONS, apiOperation } from './operations.ts';
import { videoIdOf } from '@subx/public-api';
import { routeOptions } from '../http/route-context.ts';
import type { RouteRegistrar } from '../http/route-context.ts';
import { admissionOf, withReservation } from '../http/reservation.ts';
import { extractChunks, wantsChunks, type ChunkingBody } from './extract-chunks.ts';
import { TRANSCRIPT_MODE, mayStartModelWork } from '@subx/public-api';

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
  mode: TranscriptModeName;
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

/**
 * What this request is charged, as its answer says (`credits_used`): known once the extractor has
 * answered (a translation by a model or a transcription costs more), read when the answer is
 * completed.
 */
interface Bill {
  creditsUsed: number;
}

/** The plain extract: the interface prices it at 0. */
const FREE: Readonly<Bill> = Object.freeze({ creditsUsed: 0 });

export const registerExtract: RouteRegistrar = (app, ctx) => {
  const spec = apiOperation('extract');
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
    bill: Bill,
    onAnswer?: (transcript: extractorV1.GetTranscriptResponse) => void,
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
        mode: TRANSCRIPT_MODE[body.mode],
        maxAudioSeconds: tierAudioCap(body.mode, request.admission?.account.tier, ctx.pricing),
        // The transcriber's queue takes turns between accounts (captions start no model work).
        accountId: body.mode === 'captions' ? '' : (request.admission?.account.id ?? ''),
        // The segments and the members before them (video_id, metadata, language, subtitle_type)
        // as UTF-8 bytes, rendered once per cached transcript and copied into the answer as they
        // come: nothing to decode and render per request.
        answerJson: spliceSegments,
        // Deprecated, for gateways of the previous release: answerJson says the same.
        segmentsAsJson: false,
        segmentsJsonAsBytes: false,
        headJsonAsBytes: false,
      },
      {
        requestId: request.id,
        // Model work needs longer than a read of captions (config TRANSCRIBE_SYNC_DEADLINE_MS).
        ...(mayStartModelWork(body) ? { deadlineMs: config.TRANSCRIBE_SYNC_DEADLINE_MS } : {}),
      },
    );
    onAnswer?.(transcript);
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
      ...transcriptProvenance(transcript),
    });
    // The extractor's rendered segments; from an extractor older than answer_json (it ignores the
    // field), segments: rendered here.
    const rendered = transcript.segmentsJsonUtf8;
    // The head, or with `tail` the whole body.
    const head =
      spliceSegments && rendered.length > 0
        ? (cached: boolean, alloc: ByteAllocator, tail = '') =>
            jsonHeadAround(members, 'subtitles', rendered, after(cached), alloc, tail)
        : (cached: boolean, alloc: ByteAllocator, tail = '') =>
            utf8Bytes(
              `{${textOf(members)},${jsonHead({
                ...transcriptBody(transcript, body.include_timestamps, wantsWords(body.include)),
                ...after(cached),
              }).slice(1)}${tail}`,
              alloc,
            );
    // Without the extractor's fetch time the answer would carry this request's time; such an
    // answer is not kept. A hit is an answer from a cache: `cached: true`, like the extractor's.
    if (!cache || !transcript.fetchedAt) {
      const tail = jsonTail(rateLimitJson(admissionOf(request).rateLimit), request.id, bill.creditsUsed);
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
    bill: Bill,
  ): Buffer {
    reply.type(rendered.contentType);
    if (body.format !== 'json' || rendered.whole) return rendered.payload;
    return completeJsonBody(
      rendered.payload,
      rateLimitJson(admissionOf(request).rateLimit),
      request.id,
      bill.creditsUsed,
    );
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
    bill: Bill,
    onAnswer?: (transcript: extractorV1.GetTranscriptResponse) => void,
  ): Buffer | Promise<Buffer> {
    const key: ExtractCacheKey = {
      videoId: videoIdOf(body.url),
      language: body.language,
      include: body.include,
      translate: body.translate,
      format: body.format,
      includeTimestamps: body.include_timestamps,
      mode: body.mode,
    };
    // force_refresh skips the lookup; its fresh answer replaces the entry.
    if (cache && !body.force_refresh) {
      const hit = cache.get(key);
      countCacheLookup(CACHE_NAME, hit !== undefined);
      if (hit) return respond(request, reply, body, hit, bill);
    }
    return fetchRendered(request, body, key, bill, onAnswer).then((rendered) =>
      respond(request, reply, body, rendered, bill),
    );
  }

  /**
   * What an extract may cost, reserved up front, and what it did cost, committed when it answers:
   * extract's price; a translation made by a model (the platform refusing); and a transcription of
   * the audio, 1 credit per started minute, reserved from the video's duration. A translation or a
   * transcription served from a cache costs nothing more.
   */
  async function charges(request: FastifyRequest, body: ExtractBody) {
    const base = extractPrice(ctx.pricing);
    const translation = body.translate ? modelTranslationPrice(ctx.pricing) : 0;
    let transcription = 0;
    let tierMax = 0;
    /**
     * Seconds of audio the model may process for this request, taken of its model budget up front
     * (0: audio only if the captions fail it; null: no transcription at all).
     */
    let modelSeconds: number | null = null;
    if (body.mode !== 'captions') {
      const { account } = admissionOf(request);
      tierMax = checkTranscriptionTier(body.mode, account.tier, ctx.pricing);
      const video = await backends.extractor.validateVideo(
        { videoId: videoIdOf(body.url) },
        { requestId: request.id },
      );
      // The audio is needed when asked for, or (auto) when the video has no captions at all; a
      // video with captions in another language only is left to the extractor's own cap.
      const needsAudio = body.mode === 'transcribe' || !video.hasSubtitles;
      if (needsAudio && video.duration > tierMax)
        throw audioTooLongForTier(video.duration, tierMax, account.tier);
      const syncMax = config.TRANSCRIBE_SYNC_MAX_SECONDS;
      if (needsAudio && video.duration > syncMax) {
        throw new AppError(
          'AUDIO_TOO_LONG',
          `The video is ${Math.round(video.duration)} s long; extract transcribes at most ${syncMax} s while you wait. ` +
            `Create a bulk job instead (POST /api/v1/jobs with "mode": "${body.mode}"): jobs transcribe longer audio.`,
          { details: { max_seconds: syncMax } },
        );
      }
      // An unknown duration reserves the longest audio this request may have transcribed, never
      // one minute for audio of any length.
      const longest = video.duration > 0 ? Math.ceil(video.duration) : Math.min(tierMax, syncMax);
      modelSeconds = needsAudio ? longest : 0;
      transcription = Math.max(1, transcriptionPrice(longest, ctx.pricing));
    }
    return {
      reserve: base + translation + transcription,
      modelSeconds,
      /** Past the tier's cap (a transcript another tier's request cached): not delivered. */
      tierMax,
      spent(transcript: extractorV1.GetTranscriptResponse | undefined): number {
        if (!transcript) return base;
        let cost = base;
        if (transcript.translatedFrom && transcript.translatedBy === 'model' && !transcript.cached)
          cost += translation;
        if (transcript.source === 'audio' && !transcript.cached)
          cost += Math.min(transcription, transcriptionPrice(transcript.audioSeconds, ctx.pricing));
        return cost;
      },
    };
  }

  /**
   * The plain extract (captions, nothing priced: the interface prices extract at 0) answers without
   * a ledger round trip and, on a hit, without a promise: the hottest path there is.
   */
  function handle(
    request: FastifyRequest,
    reply: FastifyReply,
    body: ExtractBody,
  ): Buffer | Promise<Buffer | string> {
    if (!wantsChunks(body) && body.mode === 'captions' && !body.translate && extractPrice(ctx.pricing) === 0)
      return extract(request, reply, body, FREE);
    return priced(request, reply, body);
  }

  async function priced(
    request: FastifyRequest,
    reply: FastifyReply,
    body: ExtractBody,
  ): Promise<Buffer | string> {
    const chunked = wantsChunks(body);
    const answer = (bill: Bill, onAnswer?: (t: extractorV1.GetTranscriptResponse) => void) =>
      chunked
        ? extractChunks(ctx, ctx.deps.embedder, request, body, bill, onAnswer).then((json) => {
            reply.type(JSON_TYPE);
            return json;
          })
        : extract(request, reply, body, bill, onAnswer);
    const cost = await charges(request, body);
    // The interface prices extract at 0: no ledger round trip unless something is priced.
    if (cost.reserve === 0) return answer({ creditsUsed: 0 });
    const { account } = admissionOf(request);
    return withReservation(credits, request, 'extract', cost.reserve, async (reservation) => {
      // An answer from the gateway's own cache is the base price; the extractor's answer says more.
      const bill: Bill = { creditsUsed: Math.min(cost.reserve, cost.spent(undefined)) };
      let seen: extractorV1.GetTranscriptResponse | undefined;
      const result = await withModelBudget(
        ctx.modelBudget,
        account,
        cost.modelSeconds,
        async () =>
          answer(bill, (t) => {
            const overCap = overAudioCap(t, cost.tierMax, account.tier);
            if (overCap) throw overCap;
            seen = t;
            bill.creditsUsed = Math.min(cost.reserve, cost.spent(t));
          }),
        () => (seen?.source === 'audio' && !seen.cached ? seen.audioSeconds : 0),
      );
      await reservation.commit(bill.creditsUsed);
      return result;
    });
  }

  app.post<{ Body: ExtractBody }>(spec.path, routeOptions(ctx, spec), (request, reply) =>
    handle(request, reply, request.body),
  );
  // POST /api/v1/extract.srt and its siblings: the same, with the format the path names.
  for (const row of V1_OPERATIONS.filter((o) => o.document && o.path.startsWith(`${spec.path}.`))) {
    const format = row.document!;
    app.post<{ Body: Omit<ExtractBody, 'format'> }>(row.path, routeOptions(ctx, row), (request, reply) =>
      handle(request, reply, { ...request.body, format }),
    );
  }
};
