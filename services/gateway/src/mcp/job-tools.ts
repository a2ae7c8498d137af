/**
 * The bulk jobs as tools: estimate_job (a dry run of POST /api/v1/jobs), create_job, get_job and
 * get_job_results. A job runs for minutes to hours: an agent estimates it, starts it, then polls
 * get_job until it has ended and pages through get_job_results.
 */
import { plural } from '@subx/errors';
import { operationById } from '../openapi/operations.ts';
import { isOk, keyOf, ok, requestFields, toolError } from './tool-kit.ts';
import type { Body, ToolDefinition } from './tool-kit.ts';

/** The request fields of a job, as POST /api/v1/jobs takes them (dry_run is the tools' choice). */
const JOB_FIELDS = [
  'source',
  'language',
  'format',
  'include_timestamps',
  'include',
  'translate',
  'mode',
  'chunking',
  'webhook_url',
];

const createJob = operationById('createJob');

function jobText(job: Body): string {
  const p = job.progress as Body;
  const total = p.total === null ? 'not listed yet' : String(p.total);
  const lines = [
    `Job ${job.job_id}: **${job.status}**. Items: ${total}; ${p.succeeded} succeeded, ${p.failed} failed, ${p.pending} pending.`,
    `${plural(job.credits_charged, 'credit')} charged so far.`,
  ];
  if (job.error) lines.push(`Error: ${job.error.code}: ${job.error.message}`);
  lines.push(
    ['completed', 'failed', 'canceled'].includes(job.status)
      ? `Read its results with get_job_results (job_id "${job.job_id}").`
      : `Call get_job with job_id "${job.job_id}" again later to follow it.`,
  );
  return lines.join('\n');
}

export const estimateJobTool: ToolDefinition = {
  name: 'estimate_job',
  spends: false,
  operationId: 'createJob',
  title: 'Estimate a bulk job',
  lead: 'A dry run of create_job: checks the job as create_job would and answers how many items it would hold, the most credits it can cost and how many duplicate URLs were removed; nothing is created, reserved or charged (it counts as one request against the daily limit). For a playlist, channel or search the items are its max, an upper bound.',
  fields: JOB_FIELDS,
  outputSchema: createJob.alternateSuccess!.response,
  async run(args, call, spec) {
    const answer = await call({ spec, body: { ...requestFields(args), dry_run: true }, ...keyOf(args) });
    if (!isOk(answer)) return toolError(answer);
    const b = answer.body as Body;
    const e = b.estimate as Body;
    const text = [
      `The job would hold ${plural(e.items, 'item')} and cost at most ${plural(e.credits_max, 'credit')} (every item succeeding).`,
      ...(e.duplicates_removed > 0 ? [`${plural(e.duplicates_removed, 'duplicate URL')} removed.`] : []),
      'Nothing was created or charged; create_job starts it.',
    ].join('\n');
    return ok(text, b);
  },
};

export const createJobTool: ToolDefinition = {
  name: 'create_job',
  spends: true,
  // A second call starts a second job, unless it carries the same idempotency_key.
  idempotent: false,
  operationId: 'createJob',
  title: 'Start a bulk job',
  lead: 'Starts a background job over many videos (a URL list, a playlist, a channel tab or a search’s first videos) and answers at once with the job; follow it with get_job, then read get_job_results. estimate_job says first what it would cost.',
  fields: JOB_FIELDS,
  outputSchema: createJob.response,
  async run(args, call, spec) {
    const answer = await call({ spec, body: requestFields(args), ...keyOf(args) });
    if (!isOk(answer)) return toolError(answer);
    const b = answer.body as Body;
    return ok(jobText(b), b);
  },
};

export const getJobTool: ToolDefinition = {
  name: 'get_job',
  spends: false,
  openWorld: false,
  operationId: 'getJob',
  title: 'Get a bulk job',
  lead: 'A job’s status, progress and credits charged so far.',
  fields: ['job_id'],
  outputSchema: operationById('getJob').response,
  async run(args, call, spec) {
    const answer = await call({ spec, params: { job_id: args.job_id } });
    if (!isOk(answer)) return toolError(answer);
    const b = answer.body as Body;
    return ok(jobText(b), b);
  },
};

function resultLine(item: Body): string {
  if (!item.success) return `- #${item.index} ${item.url}: ${item.error_code}: ${item.error_message}`;
  const text =
    typeof item.text === 'string' ? item.text : typeof item.content === 'string' ? item.content : '';
  const head = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return `- #${item.index} ${item.video_id} (${item.language})${head ? `: ${head.replaceAll('\n', ' ')}` : ''}`;
}

export const getJobResultsTool: ToolDefinition = {
  name: 'get_job_results',
  spends: false,
  openWorld: false,
  operationId: 'getJobResults',
  title: 'Get a bulk job’s results',
  lead: 'A page of a job’s finished items in source order (the text shows the start of each; the structured answer holds them whole). Pass next_cursor as cursor for the next page.',
  fields: ['job_id', 'limit', 'cursor'],
  defaults: { limit: 5 },
  outputSchema: operationById('getJobResults').response,
  async run(args, call, spec) {
    const { job_id: jobId, ...query } = requestFields(args, ['cursor']);
    const answer = await call({ spec, params: { job_id: jobId }, query });
    if (!isOk(answer)) return toolError(answer);
    const b = answer.body as Body;
    const results = b.results as Body[];
    const lines = [
      `Job ${b.job_id} (${b.status}): ${plural(results.length, 'result')} on this page.`,
      ...results.map(resultLine),
      ...(b.next_cursor ? ['', `[More results: call again with cursor "${b.next_cursor}".]`] : []),
    ];
    return ok(lines.join('\n'), b);
  },
};
