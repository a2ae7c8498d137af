/**
 * What a watch remembers, with when: its `seen` ids carry run-length marks (`seen_marks`, newest
 * first: the first `count` ids were first seen at `at`, the next mark's ids after them), so that a
 * workspace's `watch_history_days` can make it forget what it saw before then. Ids past the marks
 * were seen before watches kept marks: they count as seen when the watch was created. Pure.
 */
import type { SeenMark, WatchPending } from './model.ts';

/** Marks cut to the first `max` ids, so they never describe more ids than `seen` keeps. */
function capMarks(marks: readonly SeenMark[], max: number): SeenMark[] {
  const kept: SeenMark[] = [];
  let left = max;
  for (const mark of marks) {
    if (left <= 0) break;
    const count = Math.min(mark.count, left);
    if (count > 0) kept.push({ at: mark.at, count });
    left -= count;
  }
  return kept;
}

/** `fresh` ids found at `at`, put before what was seen, `max` kept. */
export function prependSeen(
  seen: readonly string[],
  marks: readonly SeenMark[] | undefined,
  fresh: readonly string[],
  at: number,
  max: number,
): { seen: string[]; marks: SeenMark[] } {
  const all = fresh.length > 0 ? [{ at, count: fresh.length }, ...(marks ?? [])] : [...(marks ?? [])];
  return { seen: [...fresh, ...seen].slice(0, max), marks: capMarks(all, max) };
}

/** A whole listing recorded as seen at `at` (a first run without backfill). */
export function seenAt(
  ids: readonly string[],
  at: number,
  max: number,
): { seen: string[]; marks: SeenMark[] } {
  return prependSeen([], [], ids, at, max);
}

/**
 * What is left once everything first seen before `cutoffMs` is forgotten: the seen ids and their
 * marks, the pending videos, and how many entries went.
 */
export function forgetBefore(
  watch: {
    seen: readonly string[];
    seen_marks?: readonly SeenMark[];
    pending?: readonly WatchPending[];
    created_at: number;
  },
  cutoffMs: number,
): { seen: string[]; marks: SeenMark[]; pending: WatchPending[]; removed: number } {
  const marks = watch.seen_marks ?? [];
  const keptMarks: SeenMark[] = [];
  let keep = 0;
  for (const mark of marks) {
    // Marks are newest first: once one is too old, so are all after it.
    if (mark.at < cutoffMs) break;
    keptMarks.push(mark);
    keep += mark.count;
  }
  // Ids past every mark were seen before marks were kept: as old as the watch.
  const allMarkedKept = keptMarks.length === marks.length;
  if (allMarkedKept && watch.created_at >= cutoffMs) keep = watch.seen.length;
  keep = Math.min(keep, watch.seen.length);
  const seen = watch.seen.slice(0, keep);
  const pending = (watch.pending ?? []).filter((p) => p.first_seen >= cutoffMs);
  return {
    seen,
    marks: capMarks(keptMarks, seen.length),
    pending,
    removed: watch.seen.length - seen.length + ((watch.pending ?? []).length - pending.length),
  };
}
