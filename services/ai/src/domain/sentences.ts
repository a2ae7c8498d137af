import type { TranscriptSegment } from './types.ts';
import { normalizeWhitespace, stripAnnotations, tokenize } from './text.ts';

export interface Sentence {
  readonly text: string;
  /** Start of the real caption segment in which the sentence begins. */
  readonly start: number;
  readonly end: number;
  readonly index: number;
  /** Silence (seconds) between the previous caption and this sentence; 0 inside a caption. */
  readonly pauseBefore: number;
}

export interface SegmentationOptions {
  /** Longest sentence in words before a cut is forced at the next segment boundary. */
  readonly maxWords?: number;
  /** Silence (seconds) between captions that ends an unpunctuated sentence. */
  readonly pauseSeconds?: number;
}

const ABBREVIATIONS = new Set([
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'st',
  'vs',
  'etc',
  'eg',
  'ie',
  'jr',
  'sr',
  'no',
  'approx',
]);

/**
 * Words that usually open a new spoken sentence. Auto-generated captions have no punctuation, so
 * these, together with pauses and a length cap, stand in for full stops. The stronger the opener,
 * the shorter the sentence it may cut.
 */
const STRONG_OPENERS = new Set(['so', 'now', 'okay', 'ok', 'alright', 'next', 'finally', 'anyway', 'first']);
const OPENERS = new Set(['but', 'then', 'because', 'after', 'once', 'when', 'remember', 'another', 'also']);
const WEAK_OPENERS = new Set([
  'i',
  'we',
  'you',
  'it',
  'this',
  'that',
  'the',
  'if',
  'let',
  'lets',
  "let's",
  'there',
]);

/**
 * The turns of a caption that holds a dialogue ("- Who is it?\n- Me.", or on one line once the
 * caption's line breaks became spaces: "- Who is it? - Me."), dashes dropped; null for any other
 * caption. Each turn is one speaker's: a sentence of its own, never glued to the next.
 */
function dialogueTurns(raw: string): string[] | null {
  const text = raw.trim();
  if (!/^[-–—]\s/u.test(text)) return null;
  return text
    .split(/(?:^|\s+)[-–—]\s+/u)
    .map((turn) => stripAnnotations(turn))
    .filter(Boolean);
}

/**
 * A caption that opens with a capital (not "I") after one that ended without punctuation starts a
 * new sentence: subtitle lines are usually cut at phrase ends, and a sentence that runs on across
 * them would be lifted out as one long line of unrelated fragments.
 */
function opensAfterUnfinished(text: string, previousPiece: string | undefined, words: number): boolean {
  if (previousPiece === undefined || words < 3 || /[,;:–—-]$/u.test(previousPiece)) return false;
  const first = text.split(/\s+/)[0] ?? '';
  return /^\p{Lu}/u.test(first) && !/^I(?:$|['’])/u.test(first);
}

/** True when a transcript has enough terminal punctuation to trust it (manual captions usually do). */
function isPunctuated(segments: readonly TranscriptSegment[]): boolean {
  const text = segments.map((s) => s.text).join(' ');
  const words = tokenize(text).length;
  if (words === 0) return false;
  const stops = (text.match(/[.!?…。！？](?=\s|$|["')\]])/gu) ?? []).length;
  return stops * 40 >= words;
}

function endsSentence(piece: string): boolean {
  if (!/[.!?…。！？]["')\]]?$/u.test(piece)) return false;
  const lastWord =
    piece
      .replace(/[.!?…。！？"')\]]+$/u, '')
      .split(/\s+/)
      .pop() ?? '';
  return !ABBREVIATIONS.has(lastWord.toLowerCase().replace(/\./g, ''));
}

/**
 * Splits a transcript into sentences with real start times.
 *
 * Punctuated transcripts are split at terminal punctuation. Unpunctuated ones (auto-generated
 * captions) are cut word by word: at a pause between captions, before a discourse opener ("so",
 * "now", "okay") once the sentence has some length, and in any case once it reaches `maxWords`.
 * In both, each line of a dialogue caption is a sentence, and a caption that opens with a capital
 * after an unfinished one starts a new sentence. Annotations like [Music] are dropped.
 */
export function segmentTranscript(
  segments: readonly TranscriptSegment[],
  options: SegmentationOptions = {},
): Sentence[] {
  const punctuated = isPunctuated(segments);
  const maxWords = options.maxWords ?? (punctuated ? 40 : 28);
  const pause = options.pauseSeconds ?? 1.2;
  const sentences: Sentence[] = [];
  let parts: string[] = [];
  let start = 0;
  let end = 0;
  let words = 0;
  let pauseBefore = 0;
  let pending = 0;

  const close = (): void => {
    const text = normalizeWhitespace(parts.join(' '));
    if (tokenize(text).length > 0) sentences.push({ text, start, end, index: sentences.length, pauseBefore });
    parts = [];
    words = 0;
  };
  const add = (piece: string, seg: TranscriptSegment): void => {
    if (parts.length === 0) {
      start = seg.start;
      pauseBefore = pending;
    }
    pending = 0;
    parts.push(piece);
    end = seg.start + seg.duration;
    words += tokenize(piece).length;
  };

  let previous: TranscriptSegment | undefined;
  for (const seg of [...segments].sort((a, b) => a.start - b.start)) {
    const text = stripAnnotations(seg.text);
    if (previous) pending = Math.max(pending, seg.start - (previous.start + previous.duration));
    if (text === '') {
      // A [Music] cue between two stretches of speech is a break in the talk, like silence.
      pending = Math.max(pending, seg.duration);
      previous = seg;
      continue;
    }
    const turns = dialogueTurns(seg.text);
    if (turns) {
      close();
      for (const turn of turns) {
        add(turn, seg);
        close();
      }
      previous = seg;
      continue;
    }
    if (opensAfterUnfinished(text, parts.at(-1), words)) close();
    if (punctuated) {
      if (words >= maxWords * 1.5) close();
      // Split inside the caption at sentence ends; a piece keeps its punctuation.
      const pieces = text.split(/(?<=[.!?…。！？]["')\]]?)\s+/u);
      for (const piece of pieces) {
        add(piece, seg);
        if (endsSentence(piece)) close();
      }
    } else {
      // Word by word, so a sentence may begin inside a caption (it then starts at that caption).
      const gap = pending;
      text.split(/\s+/).forEach((word, k) => {
        if (parts.length > 0) {
          const folded = (tokenize(word)[0] ?? '').toLowerCase();
          const cut =
            words >= maxWords ||
            (k === 0 && gap >= pause && words >= 4) ||
            (STRONG_OPENERS.has(folded) && words >= 6) ||
            (OPENERS.has(folded) && words >= 14) ||
            (WEAK_OPENERS.has(folded) && words >= 20);
          if (cut) close();
        }
        add(word, seg);
      });
    }
    previous = seg;
  }
  close();
  return sentences;
}
