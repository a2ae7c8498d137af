/**
 * Extract with `chunking` or `embed`: the transcript as retrieval-ready chunks (@subx/formats
 * chunkTranscript), optionally each with its embedding (@subx/embeddings). A json answer only,
 * built per request rather than spliced from the extractor's rendered bytes: the chunks depend on
 * the request's budget, and the embeddings are cached by text, so a repeat pays for neither the
 * transcript (the extractor's cache) nor the vectors (the embedder's cache).
 *
 * Credits: `chunking` alone costs what extract costs; `embed` adds 1 per started block of
 * `embeddedChunksPerCredit` chunks, reserved once the chunks are known and before the endpoint is
 * called, charged when the answer is built, released when anything fails.
 */
import type { FastifyRequest } from 'fastify';
import { embeddingsNotConfigured, type Embedder } from '@subx/embeddings';
import { Errors } from '@subx/errors';
import { answerHeadJson, chunkTranscript, type Chunk } from '@subx/formats';
import { chunkingOptionsOf } from '@subx/public-api';
import { embeddingsPrice } from '@subx/credits';
import { rateLimitJson } from '../access/rate-limit.ts';
import { jsonTail } from '../domain/extract-cache.ts';
import { subtitleTypeName, transcriptBody, transcriptProvenance, wantsWords } from '@subx/public-api';
import type { IncludeField, TranscriptModeName } from '@subx/public-api';
import type { extractorV1 } from '@subx/contracts';
import { TRANSCRIPT_MODE, mayStartModelWork } from '@subx/public-api';
import { videoIdOf } from '@subx/public-api';
import { tierAudioCap } from '@subx/credits';
import type { RouteContext } from '../http/route-context.ts';
import { admissionOf } from '../http/reservation.ts';

export interface ChunkingBody {
  max_tokens?: number;
  overlap_tokens?: number;
  split?: 'chapters' | 'none';
}

export interface ChunkedExtractBody {
  url: string;
  language: string;
  include_timestamps: boolean;
  force_refresh: boolean;
  include: IncludeField[];
  format: string;
  translate: boolean;
  mode: TranscriptModeName;
  chunking?: ChunkingBody;
  embed?: boolean;
}

/** True when the request asks for chunks (or embeddings, which come with chunks). */
export const wantsChunks = (body: { chunking?: ChunkingBody; embed?: boolean }): boolean =>
  body.chunking !== undefined || body.embed === true;

export async function extractChunks(
  ctx: RouteContext,
  embedder: Embedder | undefined,
  request: FastifyRequest,
  body: ChunkedExtractBody,
  /** What the extract part charges, read once the extractor answered (after onAnswer). */
  bill: { readonly creditsUsed: number },
  /** Given the extractor's answer: what it cost is priced from it, as for a plain extract. */
  onAnswer?: (transcript: extractorV1.GetTranscriptResponse) => void,
): Promise<string> {
  if (body.format !== 'json') {
    throw Errors.invalidRequest(
      'chunking and embed come in json answers only: send format json (the default).',
    );
  }
  // The request's own mistakes first (400), then what this deployment cannot do (422).
  const videoId = videoIdOf(body.url);
  const options = chunkingOptionsOf(body.chunking ?? {});
  if (body.embed && !embedder) throw embeddingsNotConfigured();
  const { backends, credits } = ctx.deps;
  // Chapters are read for splitting even when the answer's metadata does not show them.
  const include: IncludeField[] =
    options.split === 'chapters' && !body.include.includes('chapters')
      ? [...body.include, 'chapters']
      : body.include;
  const transcript = await backends.extractor.getTranscript(
    {
      videoId,
      language: body.language,
      include,
      forceRefresh: body.force_refresh,
      translate: body.translate,
      mode: TRANSCRIPT_MODE[body.mode],
      maxAudioSeconds: tierAudioCap(body.mode, request.admission?.account.tier, ctx.pricing),
      accountId: request.admission?.account.id ?? '',
      segmentsAsJson: false,
      segmentsJsonAsBytes: false,
      headJsonAsBytes: false,
      answerJson: false,
    },
    {
      requestId: request.id,
      ...(mayStartModelWork(body) ? { deadlineMs: ctx.deps.config.TRANSCRIBE_SYNC_DEADLINE_MS } : {}),
    },
  );
  onAnswer?.(transcript);
  const chunks: (Chunk & { embedding?: number[] })[] = chunkTranscript(
    {
      videoId: transcript.videoId || videoId,
      language: transcript.language,
      segments: transcript.segments,
      chapters: (transcript.metadata?.chapters?.values ?? []).map((c) => ({
        title: c.title,
        start: c.startTime,
      })),
    },
    options,
  );

  const render = (embeddingCredits = 0) => {
    const head = answerHeadJson({
      videoId: transcript.videoId || videoId,
      metadata: transcript.metadata,
      include: body.include,
      language: transcript.language,
      subtitleType: subtitleTypeName(transcript.subtitleType),
    });
    const rest = JSON.stringify({
      ...transcriptBody(transcript, body.include_timestamps, wantsWords(body.include)),
      cached: transcript.cached,
      extracted_at: transcript.fetchedAt || new Date(ctx.deps.clock.now()).toISOString(),
      ...transcriptProvenance(transcript),
      chunks,
      ...(body.embed && embedder ? { embedding_model: embedder.model } : {}),
    });
    const tail = jsonTail(
      rateLimitJson(admissionOf(request).rateLimit),
      request.id,
      bill.creditsUsed + embeddingCredits,
    );
    return `{${head},${rest.slice(1, -1)}${tail}`;
  };

  const price = body.embed ? embeddingsPrice(chunks.length, ctx.pricing) : 0;
  if (!body.embed || !embedder || price === 0) return render();
  // A usage event of its own: the request's extract (or translation) charge, if any, keeps its key.
  const reservation = await credits.reserve({
    accountId: admissionOf(request).account.id,
    operation: 'extract',
    amount: price,
    requestId: request.id,
    idempotencyKey: `${request.id}#embeddings`,
  });
  try {
    const vectors = await embedder.embed(chunks.map((c) => c.text));
    chunks.forEach((chunk, i) => (chunk.embedding = vectors[i]));
    const answer = render(price);
    await reservation.commit(price);
    return answer;
  } catch (error) {
    await reservation.release().catch((releaseError: unknown) => {
      request.log.error({ err: releaseError }, 'releasing a credit reservation failed');
    });
    throw error;
  }
}
