import type { CommentItem } from './types.ts';

export interface CommentSample {
  readonly comments: readonly CommentItem[];
  /** How many came from the top-by-likes half and from the most-recent half. */
  readonly fromTop: number;
  readonly fromRecent: number;
}

/** Identity of a comment for de-duplication: its id, or its content when the id is missing. */
function identity(c: CommentItem): string {
  return c.id !== '' ? `id:${c.id}` : `c:${c.author}\u0000${c.publishedAt}\u0000${c.text}`;
}

const byLikes = (a: CommentItem, b: CommentItem): number =>
  b.likes - a.likes || b.publishedAt - a.publishedAt || a.id.localeCompare(b.id);
const byRecency = (a: CommentItem, b: CommentItem): number =>
  b.publishedAt - a.publishedAt || b.likes - a.likes || a.id.localeCompare(b.id);

/**
 * The analysis sample (docs/decisions.md "Comment analysis"): half the sample from the top comments by likes, half from
 * the most recent ones, never the same comment twice. An odd size gives the extra one to the top
 * half. When one half runs out of distinct comments the other half fills the gap, so the sample is
 * `min(size, distinct comments)` long. Comments with empty text carry nothing to analyse and are
 * skipped.
 */
export function sampleComments(all: readonly CommentItem[], size: number): CommentSample {
  const seen = new Set<string>();
  const distinct: CommentItem[] = [];
  for (const c of all) {
    const key = identity(c);
    if (seen.has(key) || c.text.trim() === '') continue;
    seen.add(key);
    distinct.push(c);
  }
  const target = Math.min(size, distinct.length);
  const topWanted = Math.ceil(target / 2);
  const top = [...distinct].sort(byLikes);
  const recent = [...distinct].sort(byRecency);

  const chosen = new Set<string>();
  const picked: CommentItem[] = [];
  const take = (list: readonly CommentItem[], count: number): number => {
    let taken = 0;
    for (const c of list) {
      if (taken >= count) break;
      const key = identity(c);
      if (chosen.has(key)) continue;
      chosen.add(key);
      picked.push(c);
      taken += 1;
    }
    return taken;
  };
  let fromTop = take(top, topWanted);
  const fromRecent = take(recent, target - fromTop);
  // Only reachable when the recent half ran short, which cannot happen with distinct comments,
  // but keeps the length promise independent of the ordering above.
  fromTop += take(top, target - fromTop - fromRecent);
  return { comments: picked, fromTop, fromRecent };
}
