import { cueLines } from './text.ts';
import { toMillis } from './time.ts';
import type { Segment } from './types.ts';

export interface Cue {
  startMs: number;
  /** start + duration, and always after the start (players and strict parsers reject empty cues). */
  endMs: number;
  lines: string[];
}

/**
 * Segments as cues, in start order (stable for equal starts; WebVTT requires non-decreasing
 * starts). Segments with no printable text are dropped, so cue numbers stay consecutive.
 */
export function toCues(segments: readonly Segment[]): Cue[] {
  const cues: Cue[] = [];
  for (const segment of segments) {
    const lines = cueLines(segment.text);
    if (lines.length === 0) continue;
    const startMs = toMillis(segment.start);
    const endMs = Math.max(toMillis(segment.start + segment.duration), startMs + 1);
    cues.push({ startMs, endMs, lines });
  }
  // Array.prototype.sort is stable, so equal starts keep the platform's order.
  return cues.sort((a, b) => a.startMs - b.startMs);
}
