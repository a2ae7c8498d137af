import type { commonV1 } from '@subx/contracts';

/**
 * The video metadata as it reaches the renderers: the proto's VideoMetadata (int64 counts as
 * bigint), which the gateway decodes and the extractor answers with.
 */
export type MetadataSource = commonV1.VideoMetadata;

// int64 fields arrive as bigint; counts fit a double.
const count = (value: bigint | undefined): number | null => (value === undefined ? null : Number(value));

/**
 * The public `metadata` object: the six always-present fields, then each opt-in field `include`
 * names (docs/decisions.md "Metadata fields") in alphabetical order, whatever the request's order,
 * so every path renders the same bytes for the same answer (the extractor renders it once per
 * cached transcript, whose key holds the sorted set). A requested field the platform does not
 * provide is still present: '' / [] / null. Names that are no metadata field are ignored (the
 * callers validate `include`).
 */
export function publicMetadata(
  m: MetadataSource | undefined,
  include: readonly string[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    title: m?.title ?? '',
    channel: m?.channel ?? '',
    channel_id: m?.channelId ?? '',
    duration: m?.duration ?? 0,
    upload_date: m?.uploadDate ?? '',
    thumbnail_url: m?.thumbnailUrl ?? '',
  };
  for (const field of [...new Set(include)].sort()) {
    switch (field) {
      case 'description':
        out.description = m?.description ?? '';
        break;
      case 'tags':
        out.tags = m?.tags?.values ?? [];
        break;
      case 'categories':
        out.categories = m?.categories?.values ?? [];
        break;
      case 'view_count':
        out.view_count = count(m?.viewCount);
        break;
      case 'like_count':
        out.like_count = count(m?.likeCount);
        break;
      case 'comment_count':
        out.comment_count = count(m?.commentCount);
        break;
      case 'chapters':
        out.chapters = (m?.chapters?.values ?? []).map((c) => ({ title: c.title, start_time: c.startTime }));
        break;
      case 'is_live':
        out.is_live = m?.isLive ?? null;
        break;
      case 'was_live':
        out.was_live = m?.wasLive ?? null;
        break;
    }
  }
  return out;
}

export interface AnswerHead {
  videoId: string;
  metadata: MetadataSource | undefined;
  include: readonly string[];
  language: string;
  subtitleType: 'manual' | 'auto_generated' | 'transcribed';
}

/**
 * The members a json extract answer starts with, as JSON without the braces:
 * `"video_id":…,"metadata":{…},"language":…,"subtitle_type":…`. The extractor renders it once per
 * cached transcript (GetTranscriptRequest.answer_json) and the gateway splices it in; the
 * gateway renders the same from an older extractor's answer.
 */
export function answerHeadJson(head: AnswerHead): string {
  return JSON.stringify({
    video_id: head.videoId,
    metadata: publicMetadata(head.metadata, head.include),
    language: head.language,
    subtitle_type: head.subtitleType,
  }).slice(1, -1);
}
