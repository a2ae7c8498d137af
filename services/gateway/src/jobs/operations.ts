/**
 * The bulk jobs' rows of the operation table (openapi/operations.ts spreads them in), so their
 * validation, routes, OpenAPI and llms.txt come from the same place as every other operation's.
 */
import { findOperation } from '../domain/operation-spec.ts';
import type { OperationSpec } from '../domain/operation-spec.ts';
import {
  createJobBodySchema,
  jobEstimateSchema,
  jobIdParamsSchema,
  jobItemParamsSchema,
  jobListSchema,
  jobResultItemSchema,
  jobResultsSchema,
  jobSchema,
  pageQuerySchema,
} from '@subx/public-api';
import { operationCredits } from '@subx/credits';

const TAG = 'Bulk jobs';
const READ_ERRORS = ['UNAUTHORIZED', 'INVALID_REQUEST', 'JOB_NOT_FOUND'];

export const JOB_OPERATIONS: OperationSpec[] = [
  {
    method: 'POST',
    path: '/api/v1/jobs',
    operationId: 'createJob',
    summary: 'Start a bulk job: thousands of videos, a whole playlist or a channel',
    description:
      'Answers 202 at once with the job and `Location: /api/v1/jobs/{job_id}`; the videos are extracted in the background. Poll the job (or pass `webhook_url`), then page through GET /api/v1/jobs/{job_id}/results. Counts as one request against the daily limit; 1 credit per successful item, charged as items finish (failures are free). Items per job: Pro 1,000, Business 5,000, Enterprise 10,000. At most 2 jobs of one account run at once, the others wait `queued`. A job ends `completed` (whatever its items did), `failed` (its playlist or channel could not be listed, or the credits ran out: finished items are kept and charged) or `canceled`. Results are kept 7 days after the end. The body may be up to 1 MB. URLs naming the same video (youtu.be/ID, watch?v=ID&t=5, shorts/ID) are one item, extracted and charged once. With `dry_run: true` the job is checked and answered as an `estimate` (200: items, most credits, duplicates removed) without being created: no job, no reservation, no charge.',
    auth: 'jobs',
    scope: 'jobs',
    tier: 'pro',
    credits: operationCredits().jobs,
    body: createJobBodySchema,
    successStatus: 202,
    tag: TAG,
    response: jobSchema,
    alternateSuccess: {
      status: 200,
      description:
        'A dry run (`dry_run: true`): the job’s estimate; nothing was created, reserved or charged.',
      response: jobEstimateSchema,
    },
    errors: [
      'UNAUTHORIZED',
      'TIER_REQUIRED',
      'RATE_LIMITED',
      'INVALID_REQUEST',
      'INVALID_URL',
      'INVALID_INCLUDE',
      'INSUFFICIENT_CREDITS',
      'PAYLOAD_TOO_LARGE',
    ],
  },
  {
    method: 'GET',
    path: '/api/v1/jobs',
    operationId: 'listJobs',
    summary: 'List the account’s jobs, newest first',
    description:
      'Pages of `limit` jobs; pass `next_cursor` back as `cursor`. Not counted against the daily limit.',
    auth: 'account',
    scope: 'jobs',
    credits: 'none',
    querystring: pageQuerySchema(20, 100),
    tag: TAG,
    response: jobListSchema,
    errors: ['UNAUTHORIZED', 'INVALID_REQUEST'],
  },
  {
    method: 'GET',
    path: '/api/v1/jobs/{job_id}',
    operationId: 'getJob',
    summary: 'A job: status, progress, credits and webhook deliveries',
    description:
      'Another account’s job is 404 `JOB_NOT_FOUND`, like one that never existed. Not counted against the daily limit.',
    auth: 'account',
    scope: 'jobs',
    credits: 'none',
    params: jobIdParamsSchema,
    tag: TAG,
    response: jobSchema,
    errors: READ_ERRORS,
  },
  {
    method: 'GET',
    path: '/api/v1/jobs/{job_id}/results',
    operationId: 'getJobResults',
    summary: 'A page of a job’s results, in source order',
    description:
      'Items in the batch item shape with their `index` in the source; every item exactly once across pages. While the job runs, pages hold what is finished and `next_cursor` stays set; it is null once the job has ended and everything was returned. After `expires_at`: 410 `JOB_EXPIRED`. Not counted against the daily limit.',
    auth: 'account',
    scope: 'jobs',
    credits: 'none',
    params: jobIdParamsSchema,
    querystring: pageQuerySchema(25, 100),
    tag: TAG,
    response: jobResultsSchema,
    errors: [...READ_ERRORS, 'JOB_EXPIRED'],
  },
  {
    method: 'GET',
    path: '/api/v1/jobs/{job_id}/results/{index}',
    operationId: 'getJobResult',
    summary: 'One result as a download, in the job’s format',
    description:
      'The document in the job’s `format` (srt, vtt, txt, md, with `Content-Disposition: attachment`) or the JSON item for json. An item that failed answers its own error (e.g. 404 NO_SUBTITLES); an item not finished yet, 404 `NOT_FOUND`. Not counted against the daily limit.',
    auth: 'account',
    scope: 'jobs',
    credits: 'none',
    params: jobItemParamsSchema,
    tag: TAG,
    response: jobResultItemSchema,
    documentFormats: true,
    errors: [...READ_ERRORS, 'NOT_FOUND', 'JOB_EXPIRED'],
  },
  {
    method: 'GET',
    path: '/api/v1/jobs/{job_id}/chunks',
    operationId: 'getJobChunks',
    summary: 'A job’s chunks as NDJSON, the shape vector stores import',
    description:
      'One chunk a line (`application/x-ndjson`), with its `video_id`, for every finished successful item in source order: the job’s `chunking`, or the defaults (512 tokens, no overlap, split by chapters) for a json job created without it. A job of another format is 409 `CONFLICT` (its results keep documents, not segments). While the job runs, the finished items only. Not counted against the daily limit.',
    auth: 'account',
    scope: 'jobs',
    credits: 'none',
    params: jobIdParamsSchema,
    tag: TAG,
    mediaType: 'application/x-ndjson',
    response: {
      type: 'string',
      description:
        'Lines of JSON: `{ video_id, id, index, text, start, end, token_count, url, content_hash, chapter }`.',
    },
    errors: [...READ_ERRORS, 'CONFLICT', 'JOB_EXPIRED'],
  },
  {
    method: 'DELETE',
    path: '/api/v1/jobs/{job_id}',
    operationId: 'cancelJob',
    summary: 'Cancel a job',
    description:
      'Items not started are dropped; finished items are kept and charged, and so are those already in flight when they finish. Answers the job, `canceled`; canceling a canceled job answers it again, a completed or failed one is 409 `JOB_FINISHED`. Not counted against the daily limit.',
    auth: 'account',
    scope: 'jobs',
    credits: 'none',
    params: jobIdParamsSchema,
    tag: TAG,
    response: jobSchema,
    errors: [...READ_ERRORS, 'JOB_FINISHED'],
  },
];

/** The row of one of this wing's operations. */
export function jobOperation(id: string): OperationSpec {
  return findOperation(JOB_OPERATIONS, id);
}
