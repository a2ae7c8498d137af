/** ts-proto messages → the public JSON shapes of docs/api.md (and GET /openapi.json). */
import { aiV1, commonV1 } from '@subx/contracts';
import type { commentsV1, extractorV1 } from '@subx/contracts';
import { publicMetadata, publicSegments, renderDocument, toPlainText } from '@subx/formats';
import type { DocumentFormat, OutputFormat, PublicSegment } from '@subx/formats';
import type { IncludeField } from './common-schemas.ts';

export type SubtitleTypeName = 'manual' | 'auto_generated' | 'transcribed';

export function subtitleTypeName(type: commonV1.SubtitleType): SubtitleTypeName {
  if (type === commonV1.SubtitleType.SUBTITLE_TYPE_MANUAL) return 'manual';
  return type === commonV1.SubtitleType.SUBTITLE_TYPE_TRANSCRIBED ? 'transcribed' : 'auto_generated';
}

/** Whether `include` asks each segment's timed words. */
export const wantsWords = (include: readonly string[]): boolean => include.includes('words');

/** `subtitles` (timed, with each segment's words when asked) or `text` + `segment_count` (plain text). */
export function transcriptBody(
  t: extractorV1.GetTranscriptResponse,
  includeTimestamps: boolean,
  words = false,
): { subtitles: PublicSegment[] } | { text: string; segment_count: number } {
  if (includeTimestamps) return { subtitles: publicSegments(t.segments, words) };
  const plain = toPlainText(t.segments);
  return { text: plain.text, segment_count: plain.segmentCount };
}

export function documentFor(
  format: DocumentFormat,
  t: extractorV1.GetTranscriptResponse,
  includeTimestamps: boolean,
): string {
  return renderDocument(format, {
    segments: t.segments,
    metadata: {
      title: t.metadata?.title ?? '',
      channel: t.metadata?.channel ?? '',
      duration: t.metadata?.duration ?? 0,
    },
    includeTimestamps,
  });
}

/** A successful batch/playlist item (docs/decisions.md "Batch and playlist items"; "Outputs" for non-json formats). */
export function successItem(
  url: string,
  t: extractorV1.GetTranscriptResponse,
  options: {
    format: OutputFormat;
    includeTimestamps: boolean;
    include: readonly IncludeField[];
    /** What this item was charged (item-charges.ts). */
    creditsUsed: number;
  },
): Record<string, unknown> {
  const payload =
    options.format === 'json'
      ? transcriptBody(t, options.includeTimestamps, wantsWords(options.include))
      : { format: options.format, content: documentFor(options.format, t, options.includeTimestamps) };
  return {
    success: true,
    video_id: t.videoId,
    url,
    ...payload,
    language: t.language,
    metadata: publicMetadata(t.metadata, options.include),
    subtitle_type: subtitleTypeName(t.subtitleType),
    ...transcriptProvenance(t),
    credits_used: options.creditsUsed,
  };
}

/**
 * Where the transcript came from (common-schemas.ts transcriptProvenanceProperties): the
 * translation, a doubted language, captions or audio, and why mode auto read the audio.
 */
export function transcriptProvenance(t: extractorV1.GetTranscriptResponse): Record<string, string> {
  return {
    ...(t.translatedFrom ? { translated_from: t.translatedFrom } : {}),
    ...(t.translatedFrom && t.translatedBy ? { translated_by: t.translatedBy } : {}),
    ...(t.languageConfidence ? { language_confidence: t.languageConfidence } : {}),
    source: t.source || 'captions',
    ...(t.fallbackReason ? { fallback_reason: t.fallbackReason } : {}),
    ...(t.upstreamReason ? { upstream_reason: t.upstreamReason } : {}),
  };
}

/** A failed item: failures are free. */
export function failureItem(url: string, videoId: string | null, code: string, message: string) {
  return {
    success: false,
    video_id: videoId,
    url,
    error_code: code,
    error_message: message,
    credits_used: 0,
  };
}

export function sentimentName(s: aiV1.Sentiment): 'positive' | 'negative' | 'mixed' {
  if (s === aiV1.Sentiment.SENTIMENT_POSITIVE) return 'positive';
  if (s === aiV1.Sentiment.SENTIMENT_NEGATIVE) return 'negative';
  return 'mixed';
}

export function commentJson(c: commentsV1.Comment) {
  return {
    author: c.author,
    text: c.text,
    likes: Number(c.likes),
    published_at: Number(c.publishedAt),
    is_reply: c.isReply,
  };
}
