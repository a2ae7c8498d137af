import { MAX_KEY_QUOTES, MAX_QUOTE_CHARS } from './types.ts';
import type { CommentItem, KeyQuote } from './types.ts';
import { normalizeWhitespace, tokenize, truncateAtWord } from './text.ts';

/** Folding for quote matching: case, quote marks, dashes, whitespace and a trailing ellipsis. */
function foldForMatch(text: string): string {
  return normalizeWhitespace(
    text
      .normalize('NFKC')
      .toLowerCase()
      .replace(/[‘’`´]/g, "'")
      .replace(/[“”«»„]/g, '"')
      .replace(/[‐‑‒–—]/g, '-'),
  )
    .replace(/^["'\s]+|["'\s]+$/g, '')
    .replace(/(?:\.\.\.|…)$/u, '')
    .replace(/^(?:\.\.\.|…)/u, '')
    .trim();
}

/**
 * Keeps only quotes that really occur in the sample: the (folded) quote must be a substring of a
 * sampled comment's folded text and at least a few words long, so a model cannot invent a quote or
 * pass off a fragment like "the" as one. The author is always taken from the matching comment; a
 * mismatching author from the model is corrected rather than trusted. Duplicates (same comment) are
 * dropped, long quotes are cut at a word boundary with an ellipsis, and at most 10 are kept.
 */
export function verifyQuotes(proposed: readonly KeyQuote[], sample: readonly CommentItem[]): KeyQuote[] {
  const folded = sample.map((c) => ({ comment: c, text: foldForMatch(c.text) }));
  const usedComments = new Set<CommentItem>();
  const out: KeyQuote[] = [];
  for (const q of proposed) {
    if (out.length >= MAX_KEY_QUOTES) break;
    const needle = foldForMatch(q.text);
    if (tokenize(needle).length < 3 && needle.length < 12) continue;
    const candidates = folded.filter((f) => f.text.includes(needle) && !usedComments.has(f.comment));
    const match =
      candidates.find((f) => f.comment.author === q.author) ??
      candidates.sort((a, b) => b.comment.likes - a.comment.likes)[0];
    if (!match) continue;
    usedComments.add(match.comment);
    // Quote the comment's own words (not the model's re-typing) for the matched span.
    const start = match.text.indexOf(needle);
    const original = spanOf(match.comment.text, start, needle.length) ?? q.text;
    out.push({ text: truncateAtWord(original, MAX_QUOTE_CHARS), author: match.comment.author });
  }
  return out;
}

/** The span of the original text matching a span of its folded form, when folding kept lengths. */
function spanOf(original: string, start: number, length: number): string | undefined {
  const flat = normalizeWhitespace(original.normalize('NFKC'));
  const lead = flat.replace(/^["'\s“”‘’]+/u, '');
  if (foldForMatch(lead).length !== lead.length) return undefined;
  return lead.slice(start, start + length);
}

/**
 * Quotes for the offline engine: the most-liked substantive comments, one per author, preferring
 * ones that carry an opinion (non-zero lexicon score) so the quotes illustrate the sentiment.
 */
export function pickQuotes(
  sample: readonly CommentItem[],
  opinionScore: (c: CommentItem) => number,
  max = MAX_KEY_QUOTES,
): KeyQuote[] {
  const substantive = sample.filter((c) => tokenize(c.text).length >= 4);
  const ranked = [...substantive].sort(
    (a, b) =>
      Number(opinionScore(b) !== 0) - Number(opinionScore(a) !== 0) ||
      b.likes - a.likes ||
      b.publishedAt - a.publishedAt,
  );
  const authors = new Set<string>();
  const out: KeyQuote[] = [];
  for (const c of ranked) {
    if (out.length >= max) break;
    if (authors.has(c.author)) continue;
    authors.add(c.author);
    out.push({ text: truncateAtWord(c.text, MAX_QUOTE_CHARS), author: c.author });
  }
  return out;
}
