/**
 * Chunks of a job's results (a job created with `chunking`): computed from each stored json item's
 * segments when the results are read, so they are the chunks an extract with the same chunking
 * gives (the same ids), and nothing more is stored per item.
 */
import {
  CHUNKING_LIMITS,
  chunkTranscript,
  type Chunk,
  type ChunkingOptions,
  type Segment,
} from '@subx/formats';
import { Errors } from '@subx/errors';

interface StoredItem {
  success?: unknown;
  video_id?: unknown;
  language?: unknown;
  subtitles?: unknown;
  metadata?: { chapters?: { title: string; start_time: number }[] } | unknown;
}

/** The item's chunks (a successful json item with segments), else undefined. */
export function chunksOfItem(item: Record<string, unknown>, chunking: ChunkingOptions): Chunk[] | undefined {
  const it = item as StoredItem;
  if (it.success !== true || !Array.isArray(it.subtitles) || typeof it.video_id !== 'string')
    return undefined;
  const chapters = (it.metadata as { chapters?: { title: string; start_time: number }[] } | undefined)
    ?.chapters;
  return chunkTranscript(
    {
      videoId: it.video_id,
      language: typeof it.language === 'string' ? it.language : '',
      segments: it.subtitles as Segment[],
      chapters: chapters?.map((c) => ({ title: c.title, start: c.start_time })),
    },
    chunking,
  );
}

/** Batch and playlist results with `chunking`: every successful json item gains its chunks. */
export function withItemChunks(
  results: Record<string, unknown>[],
  chunking: ChunkingOptions,
): Record<string, unknown>[] {
  return results.map((item) => {
    const chunks = chunksOfItem(item, chunking);
    return chunks ? { ...item, chunks } : item;
  });
}

/** The item as shown: with `chunks` when the job was created with chunking. */
export function withChunks(
  job: { options: { chunking?: ChunkingOptions } },
  item: Record<string, unknown>,
): Record<string, unknown> {
  const chunking = job.options.chunking;
  if (!chunking) return item;
  const chunks = chunksOfItem(item, chunking);
  return chunks ? { ...item, chunks } : item;
}

/**
 * A job's chunking, checked when it is created: chunks are cut from timed json results, and the
 * overlap is at most half the budget. The error names the field.
 */
export function jobChunking(body: {
  format: string;
  include_timestamps: boolean;
  chunking?: { max_tokens?: number; overlap_tokens?: number; split?: 'chapters' | 'none' };
}): ChunkingOptions | undefined {
  if (!body.chunking) return undefined;
  if (body.format !== 'json' || !body.include_timestamps) {
    throw Errors.invalidRequest(
      'chunking needs timed json results: send format json and include_timestamps true (the defaults).',
    );
  }
  return chunkingOptionsOf(body.chunking);
}

/** A request's `chunking` with its defaults; the overlap past half the budget is a 400 naming it. */
export function chunkingOptionsOf(chunking: {
  max_tokens?: number;
  overlap_tokens?: number;
  split?: 'chapters' | 'none';
}): ChunkingOptions {
  const maxTokens = chunking.max_tokens ?? CHUNKING_LIMITS.defaultTokens;
  const overlapTokens = chunking.overlap_tokens ?? 0;
  if (overlapTokens > Math.floor(maxTokens / 2)) {
    throw Errors.invalidRequest(
      `chunking.overlap_tokens must be at most max_tokens/2 (${Math.floor(maxTokens / 2)}); got ${overlapTokens}.`,
    );
  }
  return { maxTokens, overlapTokens, split: chunking.split ?? 'chapters' };
}
