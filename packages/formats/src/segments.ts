import type { Segment, Word } from './types.ts';

/** A segment as the public API shows it: `words` only when asked and when the source timed any. */
export interface PublicSegment {
  text: string;
  start: number;
  duration: number;
  words?: Word[];
}

/**
 * The public API's segment objects (`subtitles` of a json answer): text, start and duration, in
 * that order, and nothing else a segment may carry (a protobuf message, a cached value); with
 * `words` (`include: ["words"]`), then each segment's timed words as `{text, start, end}`, left out
 * where the source timed none (manual tracks).
 */
export function publicSegments(segments: readonly Segment[], words = false): PublicSegment[] {
  if (!words) return segments.map(({ text, start, duration }) => ({ text, start, duration }));
  return segments.map(({ text, start, duration, words: timed }) =>
    timed && timed.length > 0
      ? { text, start, duration, words: timed.map((w) => ({ text: w.text, start: w.start, end: w.end })) }
      : { text, start, duration },
  );
}

/**
 * The same as the JSON array the gateway puts in its answer: what the extractor renders once per
 * cached transcript for GetTranscriptRequest.answer_json, so a hot transcript's segments are
 * not rendered again for every request.
 */
export function publicSegmentsJson(segments: readonly Segment[], words = false): string {
  return JSON.stringify(publicSegments(segments, words));
}
