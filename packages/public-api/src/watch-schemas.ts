/**
 * JSON Schemas of the watches API (POST/GET/DELETE /api/v1/watches...): validation of requests
 * and /openapi.json, as the jobs' (job-schemas.ts); their sources share source-schemas.ts.
 */
import {
  CHANNEL_TABS,
  WATCH_ID_PATTERN,
  WATCH_MAX_INTERVAL_MINUTES,
  WATCH_MIN_INTERVAL_MINUTES,
} from './job-vocabulary.ts';
import {
  formatSchema,
  includeArraySchema,
  includeTimestampsSchema,
  languageSchema,
  modeSchema,
  translateSchema,
  urlSchema,
} from './common-schemas.ts';
import { named } from './schema-names.ts';
import {
  channelTabSchema,
  playlistUrlSchema,
  searchFilterSchemas,
  searchQuerySchema,
} from './source-schemas.ts';

export const watchSourceSchema = named('WatchSource', {
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
        tab: channelTabSchema('Default: the tab the URL names, else videos.'),
      },
    },
    {
      type: 'object',
      title: 'WatchPlaylistSource',
      additionalProperties: false,
      required: ['type', 'url'],
      properties: {
        type: { const: 'playlist' },
        url: playlistUrlSchema,
      },
    },
    {
      type: 'object',
      title: 'WatchSearchSource',
      additionalProperties: false,
      required: ['type', 'query'],
      properties: {
        type: { const: 'search' },
        query: searchQuerySchema(),
        ...searchFilterSchemas,
      },
    },
  ],
});
for (const member of watchSourceSchema.oneOf as { title: string }[]) named(member.title, member);

export const createWatchBodySchema = {
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

export const watchSchema = named('Watch', {
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

export const watchIdParamsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['watch_id'],
  properties: { watch_id: { type: 'string', pattern: WATCH_ID_PATTERN } },
};
