/**
 * Retrieval-ready chunks of a transcript: token-sized pieces cut at segment boundaries (a segment
 * longer than the budget is cut at words), never across a chapter when splitting by chapters, with
 * an optional overlap of whole trailing pieces, each with its time span, a deep link to its first
 * second, a content hash and an id stable for the same video, language, text and chunking.
 *
 * Tokens are counted with the o200k_base encoding (gpt-tokenizer), over the chunk's exact text,
 * so `token_count` is what a model of that family is charged and never more than `max_tokens`.
 * Text that looks like a special token (`<|endoftext|>`) counts as plain text.
 */
import { createHash } from 'node:crypto';
import { countTokens as count, decode, encode } from 'gpt-tokenizer/encoding/o200k_base';
import type { Segment, Word } from './types.ts';

export interface ChunkingOptions {
  /** 16–8000. */
  maxTokens: number;
  /** 0–maxTokens/2: whole pieces of the previous chunk repeated at the start of the next. */
  overlapTokens: number;
  /** `chapters`: a chunk never spans two chapters (when the video has chapters). */
  split: 'chapters' | 'none';
}

export interface ChapterMark {
  title: string;
  /** Seconds. */
  start: number;
}

export interface Chunk {
  id: string;
  index: number;
  text: string;
  /** Seconds. */
  start: number;
  /** Seconds. */
  end: number;
  token_count: number;
  url: string;
  content_hash: string;
  chapter: string | null;
}

export const CHUNKING_LIMITS = { minTokens: 16, maxTokens: 8000, defaultTokens: 512 } as const;

const PLAIN = { disallowedSpecial: new Set<string>() };
const tokens = (text: string) => count(text, PLAIN);

interface Piece {
  text: string;
  start: number;
  end: number;
  tokens: number;
}

/**
 * A segment's text as pieces of at most `max` tokens: words, cut inside a word only when one word
 * is longer. A segment whose words are timed (`words`) is cut at those words, each piece spanning
 * its first word's start to its last word's end.
 */
function piecesOf(segment: Segment, max: number): Piece[] {
  const text = segment.text.replace(/\s+/g, ' ').trim();
  if (text === '') return [];
  const start = segment.start;
  const end = segment.start + Math.max(0, segment.duration);
  const whole = tokens(text);
  if (whole <= max) return [{ text, start, end, tokens: whole }];
  if (segment.words && segment.words.length > 0) return timedPieces(segment.words, max);

  const parts: string[] = [];
  let current = '';
  for (const word of text.split(' ')) {
    const candidate = current === '' ? word : `${current} ${word}`;
    if (tokens(candidate) <= max) {
      current = candidate;
      continue;
    }
    if (current !== '') parts.push(current);
    if (tokens(word) <= max) {
      current = word;
      continue;
    }
    // One word over the budget (a long URL, a run of CJK without spaces): cut its tokens.
    const ids = encode(word, PLAIN);
    for (let i = 0; i < ids.length; i += max) parts.push(decode(ids.slice(i, i + max)));
    current = '';
  }
  if (current !== '') parts.push(current);
  // Times shared out by characters: the platform gives no word timings.
  const total = parts.reduce((n, p) => n + p.length, 0) || 1;
  let at = start;
  return parts.map((p) => {
    const span = ((end - start) * p.length) / total;
    const piece = { text: p, start: at, end: at + span, tokens: tokens(p) };
    at += span;
    return piece;
  });
}

/** Timed words as pieces of at most `max` tokens, cut between words (inside one only when it is longer). */
function timedPieces(words: readonly Word[], max: number): Piece[] {
  const pieces: Piece[] = [];
  let current: Word[] = [];
  let text = '';
  const close = () => {
    if (current.length === 0) return;
    pieces.push({ text, start: current[0]!.start, end: current.at(-1)!.end, tokens: tokens(text) });
    current = [];
    text = '';
  };
  for (const word of words) {
    const w = word.text.replace(/\s+/g, ' ').trim();
    if (w === '') continue;
    const candidate = text === '' ? w : `${text} ${w}`;
    if (tokens(candidate) <= max) {
      current.push(word);
      text = candidate;
      continue;
    }
    close();
    if (tokens(w) <= max) {
      current = [word];
      text = w;
      continue;
    }
    // One word over the budget: its token slices share the word's span.
    const ids = encode(w, PLAIN);
    const slices = Math.ceil(ids.length / max);
    const span = (word.end - word.start) / slices;
    for (let i = 0; i < slices; i++) {
      const part = decode(ids.slice(i * max, (i + 1) * max));
      const at = word.start + span * i;
      pieces.push({ text: part, start: at, end: at + span, tokens: tokens(part) });
    }
  }
  close();
  return pieces;
}

function chapterIndexAt(chapters: readonly ChapterMark[], time: number): number {
  let found = -1;
  for (let i = 0; i < chapters.length; i++) if (chapters[i]!.start <= time + 1e-6) found = i;
  return found;
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const round = (seconds: number) => Math.round(seconds * 1000) / 1000;

export function chunkTranscript(
  input: {
    videoId: string;
    language: string;
    segments: readonly Segment[];
    chapters?: readonly ChapterMark[] | undefined;
  },
  options: ChunkingOptions,
): Chunk[] {
  const max = options.maxTokens;
  const overlap = Math.min(options.overlapTokens, Math.floor(max / 2));
  const chapters = [...(input.chapters ?? [])].sort((a, b) => a.start - b.start);
  const byChapter = options.split === 'chapters';

  // Consecutive pieces of one chapter (all of them when not splitting by chapters).
  const groups: { at: number; pieces: Piece[] }[] = [];
  for (const segment of input.segments) {
    const pieces = piecesOf(segment, max);
    if (pieces.length === 0) continue;
    const at = byChapter ? chapterIndexAt(chapters, segment.start) : 0;
    const last = groups.at(-1);
    if (last && last.at === at) last.pieces.push(...pieces);
    else groups.push({ at, pieces });
  }

  const chunks: Chunk[] = [];
  for (const group of groups) {
    let carried: Piece[] = [];
    let current: Piece[] = [];
    let text = '';
    const close = () => {
      if (current.length === 0) return;
      const first = current[0]!;
      const lastPiece = current.at(-1)!;
      const index = chunks.length;
      const contentHash = sha256(text);
      chunks.push({
        id: `chk_${sha256(
          [input.videoId, input.language, `${max}/${overlap}/${options.split}`, index, contentHash].join(
            '\n',
          ),
        ).slice(0, 32)}`,
        index,
        text,
        start: round(first.start),
        end: round(lastPiece.end),
        token_count: tokens(text),
        url: `https://youtu.be/${input.videoId}?t=${Math.floor(first.start)}`,
        content_hash: `sha256:${contentHash}`,
        // The chapter the chunk starts in (named whether or not chunks were split by chapters).
        chapter: chapters[chapterIndexAt(chapters, first.start)]?.title ?? null,
      });
      // The overlap: the longest run of whole trailing pieces within the overlap budget.
      carried = [];
      let budget = overlap;
      for (let i = current.length - 1; i >= 0 && overlap > 0; i--) {
        if (current[i]!.tokens > budget || i === 0) break;
        carried.unshift(current[i]!);
        budget -= current[i]!.tokens;
      }
    };
    for (const piece of group.pieces) {
      let candidate = text === '' ? piece.text : `${text} ${piece.text}`;
      if (current.length > 0 && tokens(candidate) > max) {
        close();
        current = [...carried];
        // Overlap never stops a chunk from taking at least one new piece.
        while (current.length > 0 && tokens([...current, piece].map((p) => p.text).join(' ')) > max)
          current.shift();
        text = current.map((p) => p.text).join(' ');
        candidate = text === '' ? piece.text : `${text} ${piece.text}`;
      }
      current.push(piece);
      text = candidate;
    }
    close();
  }
  return chunks;
}
