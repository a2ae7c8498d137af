/**
 * The watches' rows of the operation table (openapi/operations.ts spreads them in) and their
 * schemas: POST/GET/DELETE /api/v1/watches and POST /api/v1/watches/{watch_id}/run.
 */
import {
  createWatchBodySchema,
  named,
  rateLimitSchema,
  watchIdParamsSchema,
  watchSchema,
} from '@subx/public-api';
import { findOperation } from '../domain/operation-spec.ts';
import type { OperationSpec } from '../domain/operation-spec.ts';

const TAG = 'Watches';

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
    scope: 'jobs',
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
    scope: 'jobs',
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
    scope: 'jobs',
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
    scope: 'jobs',
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
    scope: 'jobs',
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
