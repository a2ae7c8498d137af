/**
 * JSON Schemas of the bulk jobs API (POST/GET/DELETE /api/v1/jobs...), used by fastify to validate
 * requests and by /openapi.json to describe both directions. A job's source and a watch's
 * (watch-schemas.ts) are made of the same pieces (source-schemas.ts).
 */
import { CHANNEL_TABS, JOB_ID_PATTERN, JOB_STATUSES } from './job-vocabulary.ts';
import {
  batchItemFailureSchema,
  batchItemSuccessSchema,
  formatSchema,
  itemUnion,
  includeArraySchema,
  includeTimestampsSchema,
  languageSchema,
  rateLimitSchema,
  translateSchema,
  chunkingSchema,
  modeSchema,
  urlSchema,
} from './common-schemas.ts';
import { named } from './schema-names.ts';
import {
  SEARCH_QUERY_MAX,
  channelTabSchema,
  playlistUrlSchema,
  searchFilterSchemas,
  searchQuerySchema,
} from './source-schemas.ts';

/** The hard ceiling of any tier (the pricing table's jobMaxItems says what each tier gets). */
const MAX_JOB_ITEMS = 10_000;

const maxSchema = (what: string) => ({
  type: 'integer',
  minimum: 1,
  maximum: MAX_JOB_ITEMS,
  description: `Most ${what} to take, newest first for channels, in order for playlists. Default and ceiling: the tier's items per job (Pro 1,000, Business 5,000, Enterprise 10,000).`,
});

const jobSourceSchema = {
  description:
    'What to extract: a list of video URLs, a whole playlist (every page, past the 25 of GET /playlist), one tab of a channel, or the first videos of a search.',
  oneOf: [
    {
      type: 'object',
      title: 'urls',
      additionalProperties: false,
      required: ['type', 'urls'],
      properties: {
        type: { const: 'urls' },
        urls: {
          type: 'array',
          minItems: 1,
          maxItems: MAX_JOB_ITEMS,
          items: urlSchema('Video URL.'),
          description:
            'Video URLs, up to the tier’s items per job. URLs that are not video URLs become INVALID_URL items, free.',
        },
      },
    },
    {
      type: 'object',
      title: 'playlist',
      additionalProperties: false,
      required: ['type', 'url'],
      properties: {
        type: { const: 'playlist' },
        url: playlistUrlSchema,
        max: maxSchema('videos'),
      },
    },
    {
      type: 'object',
      title: 'channel',
      additionalProperties: false,
      required: ['type', 'url'],
      properties: {
        type: { const: 'channel' },
        url: urlSchema(
          'Channel URL: `/@handle`, `/channel/UC…`, `/c/name` or `/user/name` (a tab in the path is allowed).',
        ),
        tab: channelTabSchema('The tab to list; default the tab the URL names, else videos.'),
        max: maxSchema('videos'),
      },
    },
    {
      type: 'object',
      title: 'search',
      additionalProperties: false,
      required: ['type', 'query'],
      properties: {
        type: { const: 'search' },
        query: searchQuerySchema(
          `What to search for (as GET /api/v1/search's \`q\`), 1 to ${SEARCH_QUERY_MAX} characters.`,
        ),
        search_type: {
          type: 'string',
          enum: ['video'],
          default: 'video',
          description: 'Only videos can be extracted: the search is of videos.',
        },
        max: {
          ...maxSchema('videos'),
          description:
            "The first this many videos of the search, in the platform's order (every results page up to it). Default and ceiling: the tier's items per job.",
        },
        ...searchFilterSchemas,
      },
    },
  ],
};

export const createJobBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['source'],
  properties: {
    source: jobSourceSchema,
    language: languageSchema,
    format: formatSchema,
    include_timestamps: includeTimestampsSchema,
    include: includeArraySchema,
    translate: translateSchema,
    mode: modeSchema,
    // json jobs with timestamps only: every successful result carries `chunks` (as extract), and
    // GET /api/v1/jobs/{job_id}/chunks downloads them as NDJSON.
    chunking: chunkingSchema,
    dry_run: {
      type: 'boolean',
      default: false,
      description:
        'true: check the job and answer 200 with its `estimate` (items, most credits, duplicates removed) instead of creating it: no job, no reservation, no credit charged. Counted against the daily limit like any POST /api/v1/jobs.',
    },
    webhook_url: {
      type: 'string',
      maxLength: 2048,
      description:
        'Called when the job ends (`job.completed`, `job.failed`, `job.canceled`), signed per Standard Webhooks with the account’s secret (POST /api/v1/webhooks/secret). http(s) only; addresses that resolve to private, loopback or link-local networks are refused.',
    },
  },
};

export const jobIdParamsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['job_id'],
  properties: {
    job_id: { type: 'string', pattern: JOB_ID_PATTERN, description: 'The job id from POST /api/v1/jobs.' },
  },
};

export const jobItemParamsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['job_id', 'index'],
  properties: {
    ...jobIdParamsSchema.properties,
    index: {
      type: 'integer',
      minimum: 0,
      maximum: MAX_JOB_ITEMS - 1,
      description: 'The item’s index in the source.',
    },
  },
};

const isoOrNull = { type: ['string', 'null'], format: 'date-time' };

const webhookStateSchema = {
  type: ['object', 'null'],
  description: 'Null without a webhook_url. `waiting` until the job ends; then every attempt is listed.',
  required: ['url', 'status', 'event', 'webhook_id', 'attempts', 'next_attempt_at'],
  additionalProperties: false,
  properties: {
    url: { type: 'string' },
    status: { type: 'string', enum: ['waiting', 'pending', 'delivered', 'failed'] },
    event: { type: ['string', 'null'], enum: ['job.completed', 'job.failed', 'job.canceled', null] },
    webhook_id: {
      type: ['string', 'null'],
      description: 'The `webhook-id` header, the same on every retry.',
    },
    attempts: {
      type: 'array',
      items: {
        type: 'object',
        required: ['attempt', 'at', 'status_code', 'error', 'duration_ms'],
        additionalProperties: false,
        properties: {
          attempt: { type: 'integer' },
          at: { type: 'string', format: 'date-time' },
          status_code: { type: ['integer', 'null'] },
          error: { type: ['string', 'null'] },
          duration_ms: { type: 'integer' },
        },
      },
    },
    next_attempt_at: isoOrNull,
  },
};

export const jobSchema = {
  type: 'object',
  required: [
    'job_id',
    'status',
    'source',
    'language',
    'format',
    'include_timestamps',
    'include',
    'progress',
    'credits_charged',
    'error',
    'created_at',
    'updated_at',
    'started_at',
    'finished_at',
    'expires_at',
    'results_url',
    'webhook',
  ],
  additionalProperties: false,
  properties: {
    job_id: { type: 'string' },
    status: { type: 'string', enum: [...JOB_STATUSES] },
    source: {
      type: 'object',
      description:
        'As sent, except that a URL list is shown by its `count`; playlists and channels gain their `title` once listed, a search the query the platform searched.',
      required: ['type'],
      properties: {
        type: { type: 'string', enum: ['urls', 'playlist', 'channel', 'search'] },
        query: { type: 'string' },
        search_type: { type: 'string', enum: ['video'] },
        upload_date: { type: 'string' },
        duration: { type: 'string' },
        sort: { type: 'string' },
        features: { type: 'array', items: { type: 'string' } },
        count: { type: 'integer' },
        url: { type: 'string' },
        tab: { type: 'string', enum: [...CHANNEL_TABS] },
        max: { type: 'integer' },
        title: { type: 'string' },
      },
    },
    language: { type: 'string' },
    format: { type: 'string', enum: ['json', 'srt', 'vtt', 'txt', 'md'] },
    include_timestamps: { type: 'boolean' },
    include: { type: 'array', items: { type: 'string' } },
    mode: { type: 'string', enum: ['captions', 'auto', 'transcribe'] },
    chunking: chunkingSchema,
    progress: {
      type: 'object',
      required: ['total', 'succeeded', 'failed', 'pending'],
      additionalProperties: false,
      properties: {
        total: {
          type: ['integer', 'null'],
          description: 'Null until a playlist, channel or search is listed.',
        },
        succeeded: { type: 'integer' },
        failed: { type: 'integer' },
        pending: {
          type: ['integer', 'null'],
          description: 'Items without a result; for a canceled job, the items that were dropped.',
        },
      },
    },
    credits_charged: { type: 'integer', description: '1 per successful item so far; failures are free.' },
    error: {
      type: ['object', 'null'],
      description:
        'Why a failed job failed (e.g. PLAYLIST_NOT_FOUND, CHANNEL_NOT_FOUND, INSUFFICIENT_CREDITS).',
      required: ['code', 'message'],
      additionalProperties: false,
      properties: { code: { type: 'string' }, message: { type: 'string' } },
    },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    started_at: isoOrNull,
    finished_at: isoOrNull,
    expires_at: {
      ...isoOrNull,
      description:
        'Results are kept until then: the account’s `job_results_days` after the end (GET /api/v1/account/retention), else JOB_RESULTS_TTL, 7 days by default.',
    },
    results_url: { type: 'string' },
    webhook: webhookStateSchema,
    request_id: {
      type: 'string',
      description: 'When the job is the whole answer (create, get, cancel); not on the jobs of a list.',
    },
    rate_limit: {
      ...rateLimitSchema,
      description: 'On the answer to POST /api/v1/jobs only, the one job route that is counted.',
    },
  },
};

export const jobListSchema = {
  type: 'object',
  required: ['jobs', 'next_cursor', 'request_id'],
  additionalProperties: false,
  properties: {
    jobs: { type: 'array', items: jobSchema },
    next_cursor: {
      type: ['string', 'null'],
      description: 'Pass as `cursor` for the next page; null on the last.',
    },
    request_id: { type: 'string' },
  },
};

/** A batch item with its `index` in the job's source. */
function withIndex(name: string, item: typeof batchItemSuccessSchema | typeof batchItemFailureSchema) {
  return named(name, {
    ...item,
    required: ['index', ...item.required],
    properties: {
      index: { type: 'integer', description: 'The item’s index in the source.' },
      ...item.properties,
      request_id: {
        type: 'string',
        description: 'When the item is the whole answer (GET …/results/{index}); not on the items of a page.',
      },
    },
  });
}

export const jobResultItemSchema = named(
  'JobResultItem',
  itemUnion(
    withIndex('JobResultSuccess', batchItemSuccessSchema),
    withIndex('JobResultFailure', batchItemFailureSchema),
  ),
);

export const jobResultsSchema = {
  type: 'object',
  required: ['job_id', 'status', 'results', 'next_cursor', 'request_id'],
  additionalProperties: false,
  properties: {
    job_id: { type: 'string' },
    status: { type: 'string', enum: [...JOB_STATUSES] },
    results: {
      type: 'array',
      items: jobResultItemSchema,
      description: 'Finished items in source order; each item exactly once across pages.',
    },
    next_cursor: {
      type: ['string', 'null'],
      description:
        'Pass as `cursor` for the next page. Null once the job has ended and every result was returned; while it runs, a page may be short and a cursor still given.',
    },
    request_id: { type: 'string' },
  },
};

export const pageQuerySchema = (defaultLimit: number, maxLimit: number) => ({
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: maxLimit,
      default: defaultLimit,
      description: `1 to ${maxLimit}.`,
    },
    cursor: { type: 'string', maxLength: 512, description: 'next_cursor of the previous page.' },
  },
});

/** The 200 answer of POST /api/v1/jobs with `dry_run: true`. */
export const jobEstimateSchema = named('JobEstimateResult', {
  type: 'object',
  required: ['estimate', 'rate_limit', 'request_id'],
  additionalProperties: false,
  properties: {
    estimate: named('JobEstimate', {
      type: 'object',
      required: ['items', 'credits_max', 'duplicates_removed'],
      additionalProperties: false,
      properties: {
        items: {
          type: 'integer',
          minimum: 0,
          description:
            'Items the job would hold: the URLs once duplicates are removed; for a playlist, channel or search source its `max` (an upper bound: the source is not listed by a dry run).',
        },
        credits_max: {
          type: 'integer',
          minimum: 0,
          description: 'Most credits the job can cost: every item succeeding.',
        },
        duplicates_removed: {
          type: 'integer',
          minimum: 0,
          description:
            'URLs dropped because they name a video already in the list (youtu.be/ID, watch?v=ID&t=5 and shorts/ID are one video); 0 for other sources.',
        },
      },
    }),
    rate_limit: rateLimitSchema,
    request_id: { type: 'string' },
  },
});
