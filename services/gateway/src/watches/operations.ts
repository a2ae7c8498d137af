/**
 * The watches' rows of the operation table (openapi/operations.ts spreads them in) and their
 * schemas: POST/GET/DELETE /api/v1/watches and POST /api/v1/watches/{watch_id}/run.
 */
import {
  SEARCH_DURATIONS,
  SEARCH_FEATURES,
  SEARCH_QUERY_MAX,
  SEARCH_SORTS,
  UPLOAD_DATES,
} from '@subx/youtube';
import { CHANNEL_TABS } from '@subx/public-api';
import { WATCH_ID_PATTERN, WATCH_MAX_INTERVAL_MINUTES, WATCH_MIN_INTERVAL_MINUTES } from '@subx/public-api';
import {
  formatSchema,
  includeArraySchema,
  includeTimestampsSchema,
  languageSchema,
  rateLimitSchema,
  translateSchema,
  modeSchema,
  urlSchema,
} from '@subx/public-api';
import { findOperation } from '../domain/operation-spec.ts';
import { named } from '@subx/public-api';
import type { OperationSpec } from '../domain/operation-spec.ts';

const TAG = 'Watches';

const searchFilters = {
  upload_date: { type: 'string', enum: [...UPLOAD_DATES] },
  duration: { type: 'string', enum: [...SEARCH_DURATIONS] },
  sort: { type: 'string', enum: [...SEARCH_SORTS] },
  features: {
    type: 'array',
    maxItems: SEARCH_FEATURES.length,
    items: { type: 'string', enum: [...SEARCH_FEATURES] },
  },
};

const watchSourceSchema = named('WatchSource', {
  description:
    'What to watch: a channel tab (newest first), a playlist, or a search (in the platform’s order, with its filters).',
  oneOf: [
    {
      type: 'object',
      // The title names the generated model (openapi-python-client): unique beside JobSource's.
      title: 'WatchChannelSource',
      additionalProperties: false,
      required: ['type', 'url'],
      properties: {
        type: { const: 'channel' },
        url: urlSchema('Channel URL: `/@handle`, `/channel/UC…`, `/c/name` or `/user/name`.'),
        tab: {
          type: 'string',
          enum: [...CHANNEL_TABS],
          description: 'Default: the tab the URL names, else videos.',
        },
      },
    },
    {
      type: 'object',
      title: 'WatchPlaylistSource',
      additionalProperties: false,
      required: ['type', 'url'],
      properties: {
        type: { const: 'playlist' },
        url: urlSchema('Playlist URL (`/playlist?list=ID`, or a watch URL carrying `list=ID`).'),
      },
    },
    {
      type: 'object',
      title: 'WatchSearchSource',
      additionalProperties: false,
      required: ['type', 'query'],
      properties: {
        type: { const: 'search' },
        query: { type: 'string', minLength: 1, maxLength: SEARCH_QUERY_MAX },
        ...searchFilters,
      },
    },
  ],
});
for (const member of watchSourceSchema.oneOf as { title: string }[]) named(member.title, member);

const createWatchBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['source', 'interval_minutes'],
  properties: {
    source: watchSourceSchema,
    interval_minutes: {
      type: 'integer',
      minimum: WATCH_MIN_INTERVAL_MINUTES,
      maximum: WATCH_MAX_INTERVAL_MINUTES,
      description: `Minutes between runs, ${WATCH_MIN_INTERVAL_MINUTES} to ${WATCH_MAX_INTERVAL_MINUTES} (a week).`,
    },
    backfill: {
      type: 'boolean',
      default: false,
      description:
        'false: the first run only records the videos that exist (later runs deliver what is new); true: the first run starts a job for them.',
    },
    webhook_url: {
      ...urlSchema('Where `watch.new_videos` (and the jobs’ own `job.*` events) are delivered, signed.'),
    },
    language: languageSchema,
    format: formatSchema,
    include_timestamps: includeTimestampsSchema,
    include: includeArraySchema,
    translate: translateSchema,
    // The jobs the watch starts transcribe captionless videos as a job with this `mode` does.
    mode: modeSchema,
  },
};

const isoDate = { type: 'string', format: 'date-time' };

const watchSchema = named('Watch', {
  type: 'object',
  additionalProperties: false,
  required: [
    'watch_id',
    'source',
    'interval_minutes',
    'backfill',
    'webhook_url',
    'language',
    'format',
    'include_timestamps',
    'include',
    'translate',
    'created_at',
    'next_run_at',
    'runs',
    'paused',
    'seen_videos',
    'pending_videos',
    'last_run',
  ],
  properties: {
    watch_id: { type: 'string', pattern: WATCH_ID_PATTERN },
    source: named('WatchSourceSummary', {
      type: 'object',
      required: ['type'],
      properties: {
        type: { type: 'string', enum: ['channel', 'playlist', 'search'] },
        url: { type: 'string' },
        tab: { type: 'string', enum: [...CHANNEL_TABS] },
        query: { type: 'string' },
        upload_date: { type: 'string' },
        duration: { type: 'string' },
        sort: { type: 'string' },
        features: { type: 'array', items: { type: 'string' } },
      },
    }),
    interval_minutes: { type: 'integer' },
    backfill: { type: 'boolean' },
    webhook_url: { type: ['string', 'null'] },
    language: { type: 'string' },
    format: { type: 'string' },
    include_timestamps: { type: 'boolean' },
    include: { type: 'array', items: { type: 'string' } },
    translate: { type: 'boolean' },
    mode: { type: 'string', enum: ['captions', 'auto', 'transcribe'] },
    created_at: isoDate,
    next_run_at: {
      ...isoDate,
      description: 'When the scheduler runs it next (it may run up to a poll later).',
    },
    runs: { type: 'integer' },
    paused: named('WatchPause', {
      type: ['object', 'null'],
      description:
        'Set while the scheduler leaves the watch alone: `key_compromised` when the key that created it was revoked after a password reset or by an operator (its owner resumes it in the dashboard). null when it runs.',
      required: ['at', 'reason'],
      properties: { at: isoDate, reason: { type: 'string', enum: ['key_compromised'] } },
    }),
    seen_videos: {
      type: 'integer',
      description: 'Videos the watch has seen so far (kept: the newest 5,000).',
    },
    pending_videos: {
      type: 'integer',
      description:
        'Videos handed to its jobs whose outcome the next run reads: those whose captions were missing go into the next run’s job again, for `WATCH_CAPTION_RETRY_HOURS` (48 by default) after they were found.',
    },
    last_run: named('WatchLastRun', {
      type: ['object', 'null'],
      required: ['run', 'at', 'new_videos', 'retried_videos', 'job_id', 'error'],
      properties: {
        run: { type: 'integer' },
        at: isoDate,
        new_videos: { type: 'integer' },
        retried_videos: {
          type: 'integer',
          description: 'Videos of earlier runs whose captions were missing, in this run’s job again.',
        },
        job_id: { type: ['string', 'null'] },
        error: named('WatchRunError', {
          type: ['object', 'null'],
          required: ['code', 'message'],
          properties: { code: { type: 'string' }, message: { type: 'string' } },
        }),
      },
    }),
    request_id: { type: 'string' },
  },
});

const watchIdParamsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['watch_id'],
  properties: { watch_id: { type: 'string', pattern: WATCH_ID_PATTERN } },
};

const READ_ERRORS = ['UNAUTHORIZED', 'INVALID_REQUEST', 'NOT_FOUND'];

export const WATCH_OPERATIONS: OperationSpec[] = [
  {
    method: 'POST',
    path: '/api/v1/watches',
    operationId: 'createWatch',
    summary: 'Watch a channel, playlist or search, and extract only what is new',
    description:
      'Answers 201 with the watch. Every `interval_minutes` the watch lists its source’s newest videos, keeps those it has not seen and starts one bulk job for them (charged as jobs are: 1 credit per successful item), then sends `watch.new_videos` to `webhook_url`. The first run comes at once: without `backfill` it only records what exists. Upcoming premieres and live streams are not counted as seen until they can be read; a video whose job item failed for missing captions (`NO_SUBTITLES`, `LANGUAGE_NOT_AVAILABLE`, or `VIDEO_PROCESSING` for a stream not yet processed) goes into later runs’ jobs again for `WATCH_CAPTION_RETRY_HOURS` (48 by default). Watches per account: Pro 10, Business 50, Enterprise 200. Counts as one request against the daily limit.',
    auth: 'jobs',
    tier: 'pro',
    credits: 'none to create; each run’s job: 1 per successful item',
    body: createWatchBodySchema,
    successStatus: 201,
    tag: TAG,
    response: named('CreatedWatch', {
      ...watchSchema,
      required: [...watchSchema.required, 'rate_limit', 'request_id'],
      properties: { ...watchSchema.properties, rate_limit: rateLimitSchema },
    }),
    errors: [
      'UNAUTHORIZED',
      'TIER_REQUIRED',
      'RATE_LIMITED',
      'INVALID_REQUEST',
      'INVALID_URL',
      'INVALID_INCLUDE',
    ],
  },
  {
    method: 'GET',
    path: '/api/v1/watches',
    operationId: 'listWatches',
    summary: 'List the account’s watches, newest first',
    description: 'Every watch of the account (at most the tier’s cap). Not counted against the daily limit.',
    auth: 'account',
    credits: 'none',
    tag: TAG,
    response: named('WatchList', {
      type: 'object',
      additionalProperties: false,
      required: ['watches', 'request_id'],
      properties: { watches: { type: 'array', items: watchSchema }, request_id: { type: 'string' } },
    }),
    errors: ['UNAUTHORIZED'],
  },
  {
    method: 'GET',
    path: '/api/v1/watches/{watch_id}',
    operationId: 'getWatch',
    summary: 'A watch: its source, schedule and last run',
    description: 'Another account’s watch is 404 `NOT_FOUND`. Not counted against the daily limit.',
    auth: 'account',
    credits: 'none',
    params: watchIdParamsSchema,
    tag: TAG,
    response: watchSchema,
    errors: READ_ERRORS,
  },
  {
    method: 'POST',
    path: '/api/v1/watches/{watch_id}/run',
    operationId: 'runWatch',
    summary: 'Run a watch now',
    description:
      'Lists the source now and starts a job for the new videos, as a scheduled run would (and moves the next scheduled run one interval on). `job_id` is null when nothing was new and nothing was to be retried. A source that cannot be listed, or a job that cannot be started, answers that error (it is also the watch’s `last_run.error`, and the videos stay new for the next run). A run of the same watch already under way is 409 `CONFLICT`. Counts as one request against the daily limit.',
    auth: 'jobs',
    tier: 'pro',
    credits: 'none; the job it starts: 1 per successful item',
    params: watchIdParamsSchema,
    tag: TAG,
    response: named('WatchRunResult', {
      type: 'object',
      additionalProperties: false,
      required: ['new_videos', 'retried_videos', 'job_id', 'rate_limit', 'request_id'],
      properties: {
        new_videos: { type: 'integer' },
        retried_videos: {
          type: 'integer',
          description: 'Videos of earlier runs whose captions were missing, in this job again.',
        },
        job_id: { type: ['string', 'null'] },
        rate_limit: rateLimitSchema,
        request_id: { type: 'string' },
      },
    }),
    errors: [
      ...READ_ERRORS,
      'TIER_REQUIRED',
      'RATE_LIMITED',
      'CONFLICT',
      'INSUFFICIENT_CREDITS',
      'PLAYLIST_NOT_FOUND',
      'CHANNEL_NOT_FOUND',
      'UPSTREAM_ERROR',
      'UPSTREAM_BLOCKED',
      'UPSTREAM_TIMEOUT',
    ],
  },
  {
    method: 'DELETE',
    path: '/api/v1/watches/{watch_id}',
    operationId: 'deleteWatch',
    summary: 'Stop and delete a watch',
    description: 'Jobs it started run on. Not counted against the daily limit.',
    auth: 'account',
    credits: 'none',
    params: watchIdParamsSchema,
    tag: TAG,
    response: named('DeletedWatch', {
      type: 'object',
      additionalProperties: false,
      required: ['watch_id', 'deleted', 'request_id'],
      properties: { watch_id: { type: 'string' }, deleted: { const: true }, request_id: { type: 'string' } },
    }),
    errors: READ_ERRORS,
  },
];

/** The row of one of this wing's operations. */
export function watchOperation(id: string): OperationSpec {
  return findOperation(WATCH_OPERATIONS, id);
}
