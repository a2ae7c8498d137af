/**
 * JSON Schema building blocks, written once: the same objects validate requests (ajv, through
 * fastify) and describe them in the OpenAPI 3.1 document. Only keywords that mean the same in
 * draft-07 (ajv) and 2020-12 (OpenAPI 3.1) are used.
 */
import { ERROR_CODES } from '@subx/errors';
import type { ErrorCode } from '@subx/errors';
import { OUTPUT_FORMATS } from '@subx/formats';
import { METADATA_FIELDS } from '@subx/youtube';
import { TRANSCRIPT_MODES } from './transcript-modes.ts';
import { DOCUMENT_FORMATS, named } from './schema-names.ts';

/**
 * docs/decisions.md "Metadata fields": the nine opt-in metadata fields, as the platform client
 * defines them, and `words` (each segment's timed words, docs/api.md "Word timestamps").
 */
export const INCLUDE_FIELDS = [...METADATA_FIELDS, 'words'] as const;
export type IncludeField = (typeof INCLUDE_FIELDS)[number];

/**
 * What any operation with a JSON body can answer besides its own codes, on either listener: a body
 * over the limit (413) and one that is not JSON (415), raised by the HTTP layer (http/errors.ts,
 * admin/routes.ts), so both OpenAPI documents list them from here.
 */
export const BODY_ERROR_CODES = [
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
] as const satisfies readonly ErrorCode[];

export const urlSchema = (description: string) => ({
  type: 'string',
  minLength: 1,
  maxLength: 2048,
  description,
});

/** ISO 639-1 plus the platform's regional/script forms (en-GB, pt-BR, zh-Hans). */
export const languageSchema = {
  type: 'string',
  pattern: '^(original|[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,2})$',
  default: 'en',
  description:
    "Language code: ISO 639-1 (`en`), optionally with a region or script (`en-GB`, `pt-BR`, `zh-Hans`); old and new codes find each other (`he`/`iw`, `fil`/`tl`, `id`/`in`) and the answer keeps the code asked for. `original`: the language the video is spoken in (the original audio track's default captions, else the auto-generated track's language, else the only manual language), which the answer's `language` names.",
};

export const formatSchema = {
  type: 'string',
  enum: [...OUTPUT_FORMATS],
  default: 'json',
  description: 'Output format: json (result object), srt, vtt, txt or md (a document of that type).',
};

export const includeTimestampsSchema = {
  type: 'boolean',
  default: true,
  description: 'true: timed segments; false: plain text (`text` and `segment_count` instead of `subtitles`).',
};

export const includeArraySchema = {
  type: 'array',
  items: { type: 'string', enum: [...INCLUDE_FIELDS] },
  default: [],
  description:
    'Opt-in metadata fields, and `words` (each timed segment carries its words with their times where the source has them). An unknown name is 400 INVALID_INCLUDE listing the valid names.',
};

export const includeCsvSchema = {
  type: 'string',
  default: '',
  maxLength: 512,
  description: `Comma-separated opt-in fields: ${INCLUDE_FIELDS.join(', ')}.`,
};

export const translateSchema = {
  type: 'boolean',
  default: false,
  description:
    'Extension: when the language has no track, let the platform translate from the best available one; the result then says `translated_from`.',
};

export const chunkingSchema = named('Chunking', {
  type: 'object',
  additionalProperties: false,
  description:
    'Adds `chunks` to a json answer: token-sized pieces (o200k_base) cut at segment boundaries (a segment longer than the budget at words), each with its time span, a deep link, a content hash and an id stable for the same video, language, text and chunking.',
  properties: {
    max_tokens: { type: 'integer', minimum: 16, maximum: 8000, default: 512 },
    overlap_tokens: {
      type: 'integer',
      minimum: 0,
      maximum: 4000,
      default: 0,
      description:
        'At most max_tokens/2: whole trailing segments of a chunk repeated at the start of the next.',
    },
    split: {
      type: 'string',
      enum: ['chapters', 'none'],
      default: 'chapters',
      description: '`chapters`: a chunk never spans two chapters (when the video has chapters).',
    },
  },
});

export type { TranscriptModeName } from './transcript-modes.ts';

export const modeSchema = {
  type: 'string',
  enum: [...TRANSCRIPT_MODES],
  default: 'captions',
  description:
    '`captions` (default): the platform’s captions only (a video without any is 404 NO_SUBTITLES). `auto`: captions when there are any in the language, else the audio transcribed by a speech-to-text model. `transcribe`: always the audio. Transcription needs the Pro tier and costs 1 credit per started minute of audio.',
};

export const embedSchema = {
  type: 'boolean',
  default: false,
  description:
    'With `chunking` (its defaults when absent): every chunk gains `embedding`, from the deployment’s embeddings endpoint; priced per started block of chunks (pricing table). None configured: 422 EMBEDDINGS_NOT_CONFIGURED.',
};

// Response building blocks (documentation and response-shape tests).

export const chunkSchema = named('Chunk', {
  type: 'object',
  required: ['id', 'index', 'text', 'start', 'end', 'token_count', 'url', 'content_hash', 'chapter'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: 'Stable for the same video, language, text and chunking.' },
    index: { type: 'integer' },
    text: { type: 'string' },
    start: { type: 'number', description: 'Seconds.' },
    end: { type: 'number', description: 'Seconds.' },
    token_count: { type: 'integer', description: 'o200k_base tokens of `text`, at most max_tokens.' },
    url: { type: 'string', description: '`https://youtu.be/<id>?t=<floor(start)>`.' },
    content_hash: { type: 'string', description: '`sha256:` and the hex SHA-256 of the UTF-8 text.' },
    chapter: { type: ['string', 'null'], description: 'The chapter the chunk starts in.' },
    embedding: { type: 'array', items: { type: 'number' }, description: 'With `embed: true`.' },
  },
});

export const rateLimitSchema = named('RateLimit', {
  type: 'object',
  description: 'Daily request limit of the key. `limit` and `remaining` are null for unlimited tiers.',
  required: ['limit', 'remaining', 'reset', 'reset_at'],
  additionalProperties: false,
  properties: {
    limit: { type: ['integer', 'null'] },
    remaining: { type: ['integer', 'null'] },
    reset: { type: 'integer', description: 'Reset time, Unix seconds.' },
    reset_at: { type: 'string', format: 'date-time', description: 'Reset time, ISO 8601.' },
  },
});

const wordSchema = named('Word', {
  type: 'object',
  required: ['text', 'start', 'end'],
  additionalProperties: false,
  properties: {
    text: { type: 'string' },
    start: { type: 'number', description: 'Seconds from the start of the video.' },
    end: { type: 'number', description: 'Seconds from the start of the video.' },
  },
});

export const segmentSchema = named('Segment', {
  type: 'object',
  required: ['text', 'start', 'duration'],
  additionalProperties: false,
  properties: {
    text: { type: 'string' },
    start: { type: 'number', description: 'Seconds.' },
    duration: { type: 'number', description: 'Seconds.' },
    words: {
      type: 'array',
      items: wordSchema,
      description:
        'With `include: ["words"]`: the words of the segment with their own times, from the speech engine (transcribed audio) or the platform (auto-generated tracks). Absent where the source times no words (manual tracks, translations).',
    },
  },
});

export const metadataSchema = named('VideoMetadata', {
  type: 'object',
  required: ['title', 'channel', 'channel_id', 'duration', 'upload_date', 'thumbnail_url'],
  additionalProperties: false,
  properties: {
    title: { type: 'string' },
    channel: { type: 'string' },
    channel_id: { type: 'string' },
    duration: { type: 'number', description: 'Seconds.' },
    upload_date: { type: 'string', description: 'YYYYMMDD.' },
    thumbnail_url: { type: 'string' },
    description: { type: 'string', description: 'Opt-in.' },
    tags: { type: 'array', items: { type: 'string' }, description: 'Opt-in.' },
    categories: { type: 'array', items: { type: 'string' }, description: 'Opt-in.' },
    view_count: { type: ['integer', 'null'], description: 'Opt-in; null when the platform does not say.' },
    like_count: { type: ['integer', 'null'], description: 'Opt-in; null when the platform does not say.' },
    comment_count: { type: ['integer', 'null'], description: 'Opt-in; null when the platform does not say.' },
    chapters: {
      type: 'array',
      description: 'Opt-in.',
      items: named('Chapter', {
        type: 'object',
        required: ['title', 'start_time'],
        additionalProperties: false,
        properties: { title: { type: 'string' }, start_time: { type: 'number' } },
      }),
    },
    is_live: { type: ['boolean', 'null'], description: 'Opt-in.' },
    was_live: { type: ['boolean', 'null'], description: 'Opt-in.' },
  },
});

export const subtitleTypeSchema = named('SubtitleType', {
  type: 'string',
  enum: ['manual', 'auto_generated', 'transcribed'],
  description:
    "`manual`: a track its uploader wrote; `auto_generated`: the platform's speech recognition, or a translation (`translated_from`), which is machine-made whoever made it (`translated_by` platform or model), from a manual track too; `transcribed`: a speech-to-text model transcribed the audio (`mode` auto or transcribe).",
});

/** Every code of the error catalogue (packages/errors), so generated clients get an enum. */
const errorCodeSchema = named('ErrorCode', {
  type: 'string',
  enum: [...ERROR_CODES],
  description: 'The error catalogue: /docs/errors lists what each code means and whether to retry.',
});

export const errorBodySchema = named('Error', {
  type: 'object',
  required: ['error'],
  properties: {
    error: named('ErrorDetail', {
      type: 'object',
      required: ['code', 'message', 'docs_url', 'request_id', 'retryable'],
      description: 'The fields after `retryable` come with the codes they name; other codes leave them out.',
      properties: {
        code: errorCodeSchema,
        message: { type: 'string' },
        docs_url: { type: 'string', description: 'Relative link to /docs/errors#<code>.' },
        request_id: { type: 'string' },
        retryable: { type: 'boolean' },
        reason: {
          type: 'string',
          description:
            'VIDEO_UNAVAILABLE, UPSTREAM_BLOCKED and CHANNEL_NOT_FOUND: the refinement (e.g. `private`).',
        },
        valid_fields: {
          type: 'array',
          items: { type: 'string' },
          description: 'INVALID_INCLUDE: the accepted include names.',
        },
        required_tier: { type: 'string', description: 'TIER_REQUIRED: the lowest tier allowed.' },
        required: { type: 'integer', description: 'INSUFFICIENT_CREDITS: what the request may cost.' },
        available: { type: 'integer', description: 'INSUFFICIENT_CREDITS: the balance.' },
        available_languages: {
          type: 'array',
          items: { type: 'string' },
          description: 'LANGUAGE_NOT_AVAILABLE: the languages the video has.',
        },
        available_comments: {
          type: 'integer',
          description: 'NOT_ENOUGH_COMMENTS: how many comments the video has.',
        },
        suggestion: {
          type: 'object',
          description: 'NOT_FOUND / METHOD_NOT_ALLOWED of a route: the operation probably meant.',
          required: ['method', 'path'],
          additionalProperties: false,
          properties: { method: { type: 'string' }, path: { type: 'string' } },
        },
        suggested_url: {
          type: 'string',
          description: 'INVALID_URL for a bare video id or a URL without its scheme: the URL to send.',
        },
      },
    }),
  },
});

export const creditsDetailsSchema = named('CreditsDetails', {
  type: 'object',
  required: ['successful', 'failed', 'total_attempted'],
  additionalProperties: false,
  properties: {
    successful: { type: 'integer' },
    failed: { type: 'integer' },
    total_attempted: { type: 'integer' },
  },
});

/** A batch, playlist or job item that succeeded: the extract result's fields for one URL. */
/** Where a transcript came from: translation, language doubt, captions or audio (extract and batch items). */
export const transcriptProvenanceProperties = {
  translated_from: { type: 'string' },
  language_confidence: {
    type: 'string',
    enum: ['low'],
    description:
      "Present when the track is auto-generated and the video's stated audio language or its manual tracks say another language.",
  },
  translated_by: {
    type: 'string',
    enum: ['platform', 'model'],
    description:
      'Set with `translated_from`: who translated, the platform or a model (when the platform refuses).',
  },
  source: {
    type: 'string',
    enum: ['captions', 'audio'],
    description:
      '`audio`: transcribed from the audio by a speech-to-text model (`mode`); `captions` otherwise.',
  },
  fallback_reason: {
    type: 'string',
    enum: ['captions_refused', 'no_captions', 'language_not_available'],
    description:
      'With `mode: "auto"` and `source: "audio"`: why the captions were not used. `captions_refused`: the video has caption tracks and the platform refused them to every client (`upstream_reason` says how).',
  },
  upstream_reason: {
    type: 'string',
    description:
      'With `fallback_reason: "captions_refused"`: the platform\'s refusal, named as UPSTREAM_BLOCKED\'s `error.reason` (`po_token`, `bot_check`, `http_429`, `empty_caption_body`, ...).',
  },
};

const itemCreditsUsed = {
  type: 'integer',
  minimum: 0,
  description:
    'What this item was charged: the item price, plus a translation by a model or a transcription when it needed one; 0 for a failed item.',
};

export const batchItemSuccessSchema = named('BatchItemSuccess', {
  type: 'object',
  required: ['success', 'video_id', 'url', 'language', 'metadata', 'subtitle_type'],
  additionalProperties: false,
  description:
    'Either subtitles (json, timed), text + segment_count (json, plain text) or format + content (other formats).',
  properties: {
    success: { type: 'boolean', const: true },
    video_id: { type: 'string' },
    url: { type: 'string' },
    subtitles: { type: 'array', items: segmentSchema },
    text: { type: 'string' },
    segment_count: { type: 'integer' },
    format: { type: 'string', enum: [...DOCUMENT_FORMATS] },
    content: { type: 'string' },
    language: { type: 'string' },
    metadata: metadataSchema,
    subtitle_type: subtitleTypeSchema,
    ...transcriptProvenanceProperties,
    chunks: { type: 'array', items: chunkSchema, description: 'Results of a job created with `chunking`.' },
    credits_used: itemCreditsUsed,
  },
});

/** A batch, playlist or job item that failed (`error_code` TIMEOUT: cut off by the request budget). */
export const batchItemFailureSchema = named('BatchItemFailure', {
  type: 'object',
  required: ['success', 'video_id', 'url', 'error_code', 'error_message'],
  additionalProperties: false,
  properties: {
    success: { type: 'boolean', const: false },
    video_id: { type: ['string', 'null'], description: 'Null when the URL is not a video URL.' },
    url: { type: 'string' },
    error_code: errorCodeSchema,
    error_message: { type: 'string' },
    credits_used: itemCreditsUsed,
  },
});

/**
 * The item union, discriminated on `success` by its `const` in each member (TypeScript narrows on
 * `item.success`; other generators try the members in order). No OpenAPI `discriminator` object:
 * its values must be strings, and openapi-typescript would retype `success` as `"true" | "false"`.
 */
export function itemUnion(success: object, failure: object) {
  return { oneOf: [success, failure] };
}

export const batchItemSchema = named('BatchItem', itemUnion(batchItemSuccessSchema, batchItemFailureSchema));
