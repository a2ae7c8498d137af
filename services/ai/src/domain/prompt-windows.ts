import type { TranscriptSegment } from './types.ts';

/**
 * Token estimate for budgeting. The service talks to any OpenAI-compatible model, whose tokenizer
 * we do not know, so an exact BPE count for one vendor would be false precision. This errs on the
 * high side: about 3.5 characters per token for alphabetic scripts (English averages ~4), and one
 * token per character for CJK and similar scripts.
 */
export function estimateTokens(text: string): number {
  let wide = 0;
  for (const ch of text) {
    if (/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}]/u.test(ch)) {
      wide += 1;
    }
  }
  const narrow = text.length - wide;
  return Math.ceil(narrow / 3.5) + wide;
}

export interface PromptWindow {
  readonly index: number;
  readonly segments: readonly TranscriptSegment[];
  readonly start: number;
  readonly end: number;
  readonly tokens: number;
}

/** The per-segment line the model sees: start second and text. Kept in one place for budgeting. */
export function segmentLine(s: TranscriptSegment): { t: number; text: string } {
  return { t: Math.round(s.start * 10) / 10, text: s.text };
}

function lineTokens(s: TranscriptSegment): number {
  // JSON overhead of {"t":123.4,"text":"..."}, plus the text itself.
  return estimateTokens(JSON.stringify(segmentLine(s))) + 1;
}

/**
 * Splits a transcript into consecutive prompt windows of at most `budgetTokens` each, cutting only
 * between segments: each window is one map step of a long summary. (Not the retrieval chunks of
 * extract's `chunking`, `@subx/formats` `chunkTranscript`: ids, chapters and an overlap.) A single
 * segment larger than the budget becomes a window of its own (captions are short, so this only
 * happens with pathological input; the model call then fails on size, not silently).
 */
export function splitIntoPromptWindows(
  segments: readonly TranscriptSegment[],
  budgetTokens: number,
): PromptWindow[] {
  const chunks: PromptWindow[] = [];
  let current: TranscriptSegment[] = [];
  let tokens = 0;
  const flush = (): void => {
    if (current.length === 0) return;
    const first = current[0]!;
    const last = current[current.length - 1]!;
    chunks.push({
      index: chunks.length,
      segments: current,
      start: first.start,
      end: last.start + last.duration,
      tokens,
    });
    current = [];
    tokens = 0;
  };
  for (const s of segments) {
    const cost = lineTokens(s);
    if (current.length > 0 && tokens + cost > budgetTokens) flush();
    current.push(s);
    tokens += cost;
  }
  flush();
  return chunks;
}

/** Total estimated tokens of a transcript in the form the model sees it. */
export function transcriptTokens(segments: readonly TranscriptSegment[]): number {
  return segments.reduce((sum, s) => sum + lineTokens(s), 0);
}

/** Groups items into consecutive batches whose estimated size stays within the budget. */
export function batchByBudget<T>(
  items: readonly T[],
  budgetTokens: number,
  size: (item: T) => number,
): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  let tokens = 0;
  for (const item of items) {
    const cost = size(item);
    if (current.length > 0 && tokens + cost > budgetTokens) {
      batches.push(current);
      current = [];
      tokens = 0;
    }
    current.push(item);
    tokens += cost;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
