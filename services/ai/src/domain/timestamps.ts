import { MIN_TIMESTAMP_VIDEO_SECONDS } from './types.ts';
import type { TimestampItem, TranscriptSegment } from './types.ts';
import { normalizeWhitespace, truncateAtWord } from './text.ts';

const MAX_TIMESTAMPS = 12;
const MAX_TOPIC_CHARS = 80;
const MAX_TEXT_CHARS = 240;

/**
 * Index of the segment a time falls into: the last segment starting at or before `seconds`
 * (binary search over start times, which captions give in order).
 */
function segmentIndexAt(starts: readonly number[], seconds: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  let found = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if ((starts[mid] ?? 0) <= seconds) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/**
 * Grounds proposed timestamps in the transcript: each one is snapped to the start of the real
 * segment it falls into, ones outside the video (negative, past its duration or past the last
 * caption) are dropped, duplicates after snapping are merged (first wins), and the result is in
 * time order. Videos shorter than 3 minutes get none (docs/decisions.md "Summaries": "may be
 * empty for short videos"; a table of contents adds nothing to a clip that short).
 */
export function groundTimestamps(
  proposed: readonly TimestampItem[],
  segments: readonly TranscriptSegment[],
  durationSeconds: number,
): TimestampItem[] {
  if (segments.length === 0) return [];
  const sorted = [...segments].sort((a, b) => a.start - b.start);
  const lastEnd = Math.max(...sorted.map((s) => s.start + s.duration));
  const videoEnd = durationSeconds > 0 ? durationSeconds : lastEnd;
  if (videoEnd < MIN_TIMESTAMP_VIDEO_SECONDS) return [];
  const starts = sorted.map((s) => s.start);

  const bySecond = new Map<number, TimestampItem>();
  for (const item of proposed) {
    const t = item.seconds;
    // A few seconds of slack past the last caption: models round, and the last cue may be short.
    if (!Number.isFinite(t) || t < 0 || t >= videoEnd || t > lastEnd + 5) continue;
    const topic = truncateAtWord(item.topic, MAX_TOPIC_CHARS);
    if (topic === '') continue;
    const seg = sorted[segmentIndexAt(starts, t)];
    if (!seg) continue;
    const seconds = Math.round(seg.start * 1000) / 1000;
    if (bySecond.has(seconds)) continue;
    bySecond.set(seconds, {
      seconds,
      topic,
      text: truncateAtWord(normalizeWhitespace(item.text), MAX_TEXT_CHARS),
    });
  }
  return [...bySecond.values()].sort((a, b) => a.seconds - b.seconds).slice(0, MAX_TIMESTAMPS);
}
