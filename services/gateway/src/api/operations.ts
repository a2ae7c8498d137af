/**
 * The public v1 operations of this wing (extraction, documents, discovery, the account): request
 * schemas (validated by fastify/ajv), response schemas and the words of the reference. The routes
 * here are built from these rows; /openapi.json and llms.txt from the whole table, which
 * openapi/operations.ts assembles from every wing's rows.
 */
import { UNAVAILABLE_REASONS } from '@subx/errors';
import {
  batchItemSchema,
  creditsDetailsSchema,
  formatSchema,
  includeArraySchema,
  includeCsvSchema,
  includeTimestampsSchema,
  languageSchema,
  rateLimitSchema,
  translateSchema,
  chunkingSchema,
  embedSchema,
  modeSchema,
  urlSchema,
} from '@subx/public-api';
import { withDocumentPaths } from './document-operations.ts';
import { ACCOUNT_OPERATIONS } from './account-operations.ts';
import { extractResponse } from './extract-response.ts';
import { SEARCH_OPERATIONS } from './search-operations.ts';
import { chunkingQueryParameters } from './chunking-query.ts';
import { findOperation, type OperationSpec } from '../domain/operation-spec.ts';
import { operationCredits } from '@subx/credits';

/** `language` of summarize and analyze: an extension without a default (none = the best track). */
const summaryLanguageSchema = {
  type: languageSchema.type,
  pattern: languageSchema.pattern,
  description:
    'Extension: the caption track to read (ISO 639-1, optionally with region or script). Without it: English if the video has it, else its first manual track (usually the original language), else its first auto-generated one.',
};

const CREDITS = operationCredits();

/** Codes of validate's `reason`, why an extract would fail (api/validate.routes.ts words each). */
const VALIDATE_REASON_CODES = [
  'video_not_found',
  ...UNAVAILABLE_REASONS,
  'video_unavailable',
  'no_subtitles',
  'processing',
  'live',
] as const;
export type ValidateReasonCode = (typeof VALIDATE_REASON_CODES)[number];

const videoUrl = urlSchema('Video URL: watch page, youtu.be short link, shorts, live or embed form.');
/** summarize's and comments/analyze's first name for `url`: one of the two is required. */
const videoUrlAlias = urlSchema(
  'The same as `url` (its first name, still accepted). Send `url` or `video_url`: one is required; both must name the same video.',
);

const fanOutCommon = {
  results: { type: 'array', items: batchItemSchema, description: 'One item per input, in input order.' },
  credits_charged: { type: 'integer' },
  credits_details: creditsDetailsSchema,
  rate_limit: rateLimitSchema,
  extracted_at: { type: 'string', format: 'date-time' },
  request_id: { type: 'string' },
};

const COMMON_AUTH_ERRORS = ['UNAUTHORIZED', 'RATE_LIMITED', 'INVALID_REQUEST'];
/** Every operation that reaches the platform can answer these (the platform failed, refused or timed out). */
const UPSTREAM_ERRORS = ['UPSTREAM_ERROR', 'UPSTREAM_BLOCKED', 'UPSTREAM_TIMEOUT'];

/** This wing's rows of the operation table but the account's, with extract's document rows. */
export const V1_OPERATIONS: OperationSpec[] = withDocumentPaths([
  {
    method: 'POST',
    path: '/api/v1/extract',
    operationId: 'extract',
    summary: 'Extract subtitles of one video',
    description:
      'Returns the extraction result as JSON; POST /api/v1/extract.srt (.vtt, .txt, .md) answers a document of that type instead (text/srt, text/vtt, text/plain, text/markdown), as does `format` srt/vtt/txt/md here. Results may come from the extractor cache (`cached`); `force_refresh` bypasses it.',
    auth: 'extract',
    scope: 'transcripts:read',
    credits: CREDITS.extract,
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['url'],
      properties: {
        url: videoUrl,
        language: languageSchema,
        include_timestamps: includeTimestampsSchema,
        force_refresh: {
          type: 'boolean',
          default: false,
          description: 'Bypass the cache and fetch fresh subtitles.',
        },
        include: includeArraySchema,
        format: formatSchema,
        translate: translateSchema,
        chunking: chunkingSchema,
        embed: embedSchema,
        mode: modeSchema,
      },
    },
    response: extractResponse,
    documentPaths: true,
    errors: [
      ...COMMON_AUTH_ERRORS,
      'INVALID_URL',
      'INVALID_INCLUDE',
      'VIDEO_NOT_FOUND',
      'VIDEO_UNAVAILABLE',
      'NO_SUBTITLES',
      'VIDEO_PROCESSING',
      'LANGUAGE_NOT_AVAILABLE',
      'INSUFFICIENT_CREDITS',
      'TIER_REQUIRED',
      'NO_SPEECH',
      'AUDIO_TOO_LONG',
      'TRANSCRIPTION_NOT_CONFIGURED',
      'TRANSCRIPTION_FAILED',
      'EMBEDDINGS_NOT_CONFIGURED',
      'SERVICE_UNAVAILABLE',
      'UPSTREAM_ERROR',
      'UPSTREAM_BLOCKED',
      'UPSTREAM_TIMEOUT',
    ],
  },
  {
    method: 'POST',
    path: '/api/v1/batch',
    operationId: 'batch',
    summary: 'Extract subtitles of up to 10 videos',
    description:
      'One result per URL, in input order; failed items (error_code, error_message; TIMEOUT when cut off by the 60 s request budget) do not fail the request. Counts as one request; 1 credit per successful item, reserved up front for every URL that is a video URL (the others are INVALID_URL items and cost nothing). An item translated by a model adds the model translation price, an item transcribed from its audio (`mode`, Pro tier and above) 1 credit per started minute of audio, reserved from its duration and charged on delivery; answers from a cache add nothing.',
    auth: 'batch',
    scope: 'transcripts:read',
    credits: CREDITS.items,
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['urls'],
      properties: {
        urls: {
          type: 'array',
          minItems: 1,
          maxItems: 10,
          items: videoUrl,
          description: '1 to 10 video URLs.',
        },
        language: languageSchema,
        format: formatSchema,
        include_timestamps: includeTimestampsSchema,
        include: includeArraySchema,
        translate: translateSchema,
        // Every successful item gains the `chunks` extract gives (the same ids); timed json only.
        chunking: chunkingSchema,
        mode: modeSchema,
      },
    },
    response: {
      type: 'object',
      required: ['results', 'credits_charged', 'credits_details', 'rate_limit', 'extracted_at', 'request_id'],
      additionalProperties: false,
      properties: fanOutCommon,
    },
    errors: [...COMMON_AUTH_ERRORS, 'INVALID_INCLUDE', 'INSUFFICIENT_CREDITS', 'TIER_REQUIRED'],
  },
  {
    method: 'GET',
    path: '/api/v1/playlist',
    operationId: 'playlist',
    summary: 'Extract subtitles of the videos of a playlist (up to 25)',
    description:
      'Processes the first `max` videos of the playlist, 120 s in total and max(120 / n, 10) s per video. Counts as one request; 1 credit per successful item, reserved up front for the videos the playlist really has (at most `max`), after listing it. `mode` and model translations are priced per item as on batch.',
    auth: 'playlist',
    scope: 'transcripts:read',
    credits: CREDITS.items,
    querystring: {
      type: 'object',
      additionalProperties: false,
      required: ['url'],
      properties: {
        url: urlSchema('Playlist URL (`/playlist?list=ID`, or a watch URL carrying `list=ID`).'),
        max: {
          type: 'integer',
          minimum: 1,
          maximum: 25,
          default: 10,
          description: 'Videos to process, 1 to 25.',
        },
        language: languageSchema,
        format: formatSchema,
        include_timestamps: includeTimestampsSchema,
        include: includeCsvSchema,
        translate: translateSchema,
        mode: modeSchema,
        // extract's `chunking` object as one parameter per member (no defaults here: any of them
        // turns chunking on, the others then take chunking's defaults).
        ...chunkingQueryParameters,
      },
    },
    response: {
      type: 'object',
      required: [
        'playlist',
        'extracted_count',
        'results',
        'credits_charged',
        'credits_details',
        'rate_limit',
        'extracted_at',
        'request_id',
      ],
      additionalProperties: false,
      properties: {
        playlist: {
          type: 'object',
          required: ['title', 'uploader', 'total_videos'],
          additionalProperties: false,
          properties: {
            title: { type: 'string' },
            uploader: { type: 'string' },
            total_videos: { type: 'integer' },
          },
        },
        extracted_count: { type: 'integer', description: 'Videos processed.' },
        ...fanOutCommon,
      },
    },
    errors: [
      ...COMMON_AUTH_ERRORS,
      'INVALID_URL',
      'INVALID_INCLUDE',
      'INSUFFICIENT_CREDITS',
      'TIER_REQUIRED',
      'PLAYLIST_NOT_FOUND',
      ...UPSTREAM_ERRORS,
    ],
  },
  {
    method: 'GET',
    path: '/api/v1/validate',
    operationId: 'validate',
    summary: 'Check subtitle availability before extracting',
    description:
      'No authentication and no credits; limited per client IP. Answers are cached by the extractor for one hour (`cached`). A URL that is not an accepted video URL is 400 INVALID_URL.',
    auth: null,
    scope: null,
    credits: 'free',
    querystring: {
      type: 'object',
      additionalProperties: false,
      required: ['url'],
      properties: { url: videoUrl },
    },
    response: {
      type: 'object',
      required: [
        'valid',
        'has_subtitles',
        'available_languages',
        'video_title',
        'duration',
        'cached',
        'reason',
        'request_id',
      ],
      additionalProperties: false,
      properties: {
        valid: { type: 'boolean' },
        has_subtitles: { type: 'boolean' },
        available_languages: {
          type: 'object',
          required: ['manual', 'auto_generated'],
          additionalProperties: false,
          properties: {
            manual: { type: 'array', items: { type: 'string' } },
            auto_generated: { type: 'array', items: { type: 'string' } },
          },
        },
        video_title: { type: 'string' },
        duration: { type: 'number' },
        cached: { type: 'boolean' },
        reason: {
          type: ['object', 'null'],
          description:
            'Why an extract of this video would fail; null when it can succeed (`valid` and `has_subtitles`). `valid: false`: video_not_found, or why the video cannot be read (private, members_only, paid, geo_blocked, age_restricted, upcoming_live, removed, unplayable; video_unavailable when the extractor does not say). `valid: true` without subtitles: no_subtitles, or, when they are only not there yet, processing (a live stream that has ended and is still being processed) or live (live now); extract then answers 503 VIDEO_PROCESSING.',
          required: ['code', 'message'],
          additionalProperties: false,
          properties: {
            code: { type: 'string', enum: [...VALIDATE_REASON_CODES] },
            message: { type: 'string' },
          },
        },
        request_id: { type: 'string' },
      },
    },
    errors: ['RATE_LIMITED', 'INVALID_REQUEST', 'INVALID_URL', 'VIDEO_NOT_FOUND', 'UPSTREAM_BLOCKED'],
  },
  {
    method: 'POST',
    path: '/api/v1/summarize',
    operationId: 'summarize',
    summary: 'AI-generated video summary (Pro tier or higher)',
    description:
      'Costs 2, 4 or 6 credits for videos up to 10 min, 10–30 min and longer; the price is known before the work starts and only that much is needed (a 2-credit video needs 2 credits). Summaries are cached 24 h per (video, style, language); a user pays once per cache entry, so the same user gets `cached: true, credits_used: 0` again, whatever their balance. Videos without English captions are summarised from their best track (see `language`); `language` in the response says which was read.',
    auth: 'summarize',
    scope: 'ai',
    tier: 'pro',
    credits: CREDITS.summarize,
    body: {
      type: 'object',
      additionalProperties: false,
      properties: {
        url: videoUrl,
        video_url: videoUrlAlias,
        style: {
          type: 'string',
          enum: ['brief', 'detailed', 'key_points'],
          default: 'brief',
          description: 'brief (2–3 sentences), detailed (a paragraph) or key_points (bullet list).',
        },
        language: summaryLanguageSchema,
      },
    },
    response: {
      type: 'object',
      required: [
        'summary',
        'video_id',
        'credits_used',
        'cached',
        'video_metadata',
        'timestamps',
        'model',
        'language',
        'rate_limit',
        'request_id',
      ],
      additionalProperties: false,
      properties: {
        summary: { type: 'string' },
        language: {
          type: 'string',
          description: 'Extension: the language of the captions the summary was read from.',
        },
        model: {
          type: 'string',
          description:
            'Which engine wrote the summary: the model name, or `local-extractive` for the offline fallback.',
        },
        video_id: { type: 'string' },
        credits_used: { type: 'integer' },
        cached: { type: 'boolean' },
        video_metadata: {
          type: 'object',
          required: ['title', 'duration', 'channel'],
          additionalProperties: false,
          properties: {
            title: { type: 'string' },
            duration: { type: 'number' },
            channel: { type: 'string' },
          },
        },
        timestamps: {
          type: 'array',
          items: {
            type: 'object',
            required: ['seconds', 'topic', 'text'],
            additionalProperties: false,
            properties: { seconds: { type: 'number' }, topic: { type: 'string' }, text: { type: 'string' } },
          },
        },
        rate_limit: rateLimitSchema,
        request_id: { type: 'string' },
      },
    },
    errors: [
      ...COMMON_AUTH_ERRORS,
      'TIER_REQUIRED',
      'INVALID_URL',
      'INSUFFICIENT_CREDITS',
      'VIDEO_NOT_FOUND',
      'NO_SUBTITLES',
      'VIDEO_PROCESSING',
      'VIDEO_UNAVAILABLE',
      ...UPSTREAM_ERRORS,
    ],
  },
  {
    method: 'GET',
    path: '/api/v1/comments',
    operationId: 'comments',
    summary: 'Download video comments (Pro tier or higher)',
    description:
      '1 credit per started 500 comments returned (ceil(max / 500) reserved up front); 0 when cached or when comments are disabled (then `comments` is empty and `comments_disabled` true). Cached one hour by the comments service.',
    auth: 'comments',
    scope: 'transcripts:read',
    tier: 'pro',
    credits: CREDITS.comments,
    querystring: {
      type: 'object',
      additionalProperties: false,
      required: ['url'],
      properties: {
        url: videoUrl,
        max: {
          type: 'integer',
          minimum: 1,
          maximum: 2000,
          default: 500,
          description: 'Comments to return, 1 to 2000.',
        },
        sort: {
          type: 'string',
          enum: ['relevance', 'time'],
          default: 'relevance',
          description: 'relevance, or time (newest first).',
        },
      },
    },
    response: {
      type: 'object',
      required: [
        'comments',
        'video_id',
        'comment_count',
        'comments_disabled',
        'cached',
        'credits_used',
        'rate_limit',
        'request_id',
      ],
      additionalProperties: false,
      properties: {
        comments: {
          type: 'array',
          items: {
            type: 'object',
            required: ['author', 'text', 'likes', 'published_at', 'is_reply'],
            additionalProperties: false,
            properties: {
              author: { type: 'string' },
              text: { type: 'string' },
              likes: { type: 'integer' },
              published_at: { type: 'integer', description: 'Unix seconds.' },
              is_reply: { type: 'boolean' },
            },
          },
        },
        video_id: { type: 'string' },
        comment_count: { type: 'integer' },
        comments_disabled: { type: 'boolean' },
        cached: { type: 'boolean' },
        credits_used: { type: 'integer' },
        rate_limit: rateLimitSchema,
        request_id: { type: 'string' },
      },
    },
    errors: [
      ...COMMON_AUTH_ERRORS,
      'TIER_REQUIRED',
      'INVALID_URL',
      'INSUFFICIENT_CREDITS',
      'VIDEO_NOT_FOUND',
      ...UPSTREAM_ERRORS,
    ],
  },
  {
    method: 'POST',
    path: '/api/v1/comments/analyze',
    operationId: 'analyzeComments',
    summary: 'AI sentiment and theme analysis of comments (Pro tier or higher)',
    description:
      'Samples half top comments by likes, half recent ones. Needs at least 10 comments on the video. 3 credits; 0 when the analysis is served from cache, whatever the balance.',
    auth: 'comments_analyze',
    scope: 'ai',
    tier: 'pro',
    credits: CREDITS.commentsAnalyze,
    body: {
      type: 'object',
      additionalProperties: false,
      properties: {
        url: videoUrl,
        video_url: videoUrlAlias,
        sample_size: {
          type: 'integer',
          minimum: 10,
          maximum: 100,
          default: 50,
          description: 'Comments to analyse, 10 to 100.',
        },
        language: {
          ...summaryLanguageSchema,
          description:
            'Extension: the language of the comments, a hint for the analysis (default `en`). The analysis reads comments only, so a video needs no captions in any language.',
        },
      },
    },
    response: {
      type: 'object',
      required: [
        'sentiment',
        'themes',
        'key_quotes',
        'video_id',
        'sample_size',
        'total_comments',
        'credits_used',
        'cached',
        'model',
        'rate_limit',
        'request_id',
      ],
      additionalProperties: false,
      properties: {
        sentiment: { type: 'string', enum: ['positive', 'negative', 'mixed'] },
        model: {
          type: 'string',
          description: 'Which engine analysed: the model name, or `local-lexicon` for the offline fallback.',
        },
        themes: { type: 'array', maxItems: 5, items: { type: 'string' } },
        key_quotes: {
          type: 'array',
          maxItems: 10,
          items: {
            type: 'object',
            required: ['text', 'author'],
            additionalProperties: false,
            properties: { text: { type: 'string' }, author: { type: 'string' } },
          },
        },
        video_id: { type: 'string' },
        sample_size: { type: 'integer' },
        total_comments: { type: 'integer' },
        credits_used: { type: 'integer' },
        cached: { type: 'boolean' },
        rate_limit: rateLimitSchema,
        request_id: { type: 'string' },
      },
    },
    errors: [
      ...COMMON_AUTH_ERRORS,
      'TIER_REQUIRED',
      'INVALID_URL',
      'INSUFFICIENT_CREDITS',
      'NOT_ENOUGH_COMMENTS',
      'COMMENTS_DISABLED',
      'VIDEO_NOT_FOUND',
      ...UPSTREAM_ERRORS,
    ],
  },
  // Discovery: search (search-operations.ts).
  ...SEARCH_OPERATIONS,
]);

export const healthResponseSchema = {
  type: 'object',
  required: ['status', 'version', 'api_version', 'services', 'platform'],
  additionalProperties: false,
  properties: {
    status: { type: 'string', enum: ['ok', 'degraded', 'down'] },
    platform: {
      type: 'string',
      enum: ['ok', 'unreachable'],
      description:
        'The video platform as the extractor sees it: `unreachable` (and `status: degraded`) while its requests get no answer at all.',
    },
    version: { type: 'string' },
    api_version: { type: 'string', const: 'v1' },
    services: {
      type: 'object',
      required: ['gateway', 'extractor', 'comments', 'ai', 'billing'],
      additionalProperties: false,
      properties: Object.fromEntries(
        ['gateway', 'extractor', 'comments', 'ai', 'billing'].map((name) => [
          name,
          { type: 'string', enum: ['ok', 'down'] },
        ]),
      ),
    },
  },
};

/** The row of one of this wing's operations (the account's included). */
export function apiOperation(id: string): OperationSpec {
  return findOperation([...V1_OPERATIONS, ...ACCOUNT_OPERATIONS], id);
}
