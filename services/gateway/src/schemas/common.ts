/**
 * JSON Schema building blocks, written once: the same objects validate requests (ajv, through
 * fastify) and describe them in the OpenAPI 3.1 document. Only keywords that mean the same in
 * draft-07 (ajv) and 2020-12 (OpenAPI 3.1) are used.
 */
import { OUTPUT_FORMATS } from '@subx/formats';
import { METADATA_FIELDS } from '@subx/youtube';

/** docs/decisions.md "Metadata fields": the nine opt-in metadata fields, as the platform client defines them. */
export const INCLUDE_FIELDS = METADATA_FIELDS;
export type IncludeField = (typeof INCLUDE_FIELDS)[number];

export const urlSchema = (description: string) => ({
  type: 'string',
  minLength: 1,
  maxLength: 2048,
  description,
});

/** ISO 639-1 plus the platform's regional/script forms (en-GB, pt-BR, zh-Hans). */
export const languageSchema = {
  type: 'string',
  pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,2}$',
  default: 'en',
  description:
    'Language code: ISO 639-1 (`en`), optionally with a region or script (`en-GB`, `pt-BR`, `zh-Hans`).',
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
  description: 'Opt-in metadata fields. An unknown name is 400 INVALID_INCLUDE listing the nine valid names.',
};

export const includeCsvSchema = {
  type: 'string',
  default: '',
  maxLength: 512,
  description: `Comma-separated opt-in metadata fields: ${INCLUDE_FIELDS.join(', ')}.`,
};

export const translateSchema = {
  type: 'boolean',
  default: false,
  description:
    'Extension: when the language has no track, let the platform translate from the best available one; the result then says `translated_from`.',
};

// Response building blocks (documentation and response-shape tests).

export const rateLimitSchema = {
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
};

export const segmentSchema = {
  type: 'object',
  required: ['text', 'start', 'duration'],
  additionalProperties: false,
  properties: {
    text: { type: 'string' },
    start: { type: 'number', description: 'Seconds.' },
    duration: { type: 'number', description: 'Seconds.' },
  },
};

export const metadataSchema = {
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
      items: {
        type: 'object',
        required: ['title', 'start_time'],
        additionalProperties: false,
        properties: { title: { type: 'string' }, start_time: { type: 'number' } },
      },
    },
    is_live: { type: ['boolean', 'null'], description: 'Opt-in.' },
    was_live: { type: ['boolean', 'null'], description: 'Opt-in.' },
  },
};

export const subtitleTypeSchema = { type: 'string', enum: ['manual', 'auto_generated'] };

export const errorBodySchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'docs_url', 'request_id', 'retryable'],
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        docs_url: { type: 'string', description: 'Relative link to /docs/errors#<code>.' },
        request_id: { type: 'string' },
        retryable: { type: 'boolean' },
        reason: { type: 'string', description: 'VIDEO_UNAVAILABLE / UPSTREAM_BLOCKED refinement.' },
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
    },
  },
};

export const creditsDetailsSchema = {
  type: 'object',
  required: ['successful', 'failed', 'total_attempted'],
  additionalProperties: false,
  properties: {
    successful: { type: 'integer' },
    failed: { type: 'integer' },
    total_attempted: { type: 'integer' },
  },
};

export const batchItemSchema = {
  type: 'object',
  required: ['success', 'video_id', 'url'],
  additionalProperties: false,
  description:
    'On success: language, metadata, subtitle_type and either subtitles (json, timed), text + segment_count (json, plain text) or format + content (other formats). On failure: error_code and error_message.',
  properties: {
    success: { type: 'boolean' },
    video_id: { type: ['string', 'null'] },
    url: { type: 'string' },
    subtitles: { type: 'array', items: segmentSchema },
    text: { type: 'string' },
    segment_count: { type: 'integer' },
    format: { type: 'string', enum: ['srt', 'vtt', 'txt', 'md'] },
    content: { type: 'string' },
    language: { type: 'string' },
    metadata: metadataSchema,
    subtitle_type: subtitleTypeSchema,
    translated_from: { type: 'string' },
    error_code: { type: 'string' },
    error_message: { type: 'string' },
  },
};
