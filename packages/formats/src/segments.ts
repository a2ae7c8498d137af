import type { Segment } from './types.ts';

/**
 * The public API's segment objects (`subtitles` of a json answer): text, start and duration, in
 * that order, and nothing else a segment may carry (a protobuf message, a cached value).
 */
export function publicSegments(segments: readonly Segment[]): Segment[] {
  return segments.map(({ text, start, duration }) => ({ text, start, duration }));
}

/**
 * The same as the JSON array the gateway puts in its answer: what the extractor renders once per
 * cached transcript for GetTranscriptRequest.answer_json, so a hot transcript's segments are
 * not rendered again for every request.
 */
export function publicSegmentsJson(segments: readonly Segment[]): string {
  return JSON.stringify(publicSegments(segments));
}
