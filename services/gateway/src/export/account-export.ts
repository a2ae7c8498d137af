/**
 * The account's export (GET /api/v1/account/export): every piece of the account's data as one
 * JSON object a line, read a bounded page at a time, so the archive is never held whole: the
 * lines are made as the client takes them (the route streams this generator with backpressure).
 *
 * Nothing secret is written: keys as their metadata (prefix, last four, scopes), the webhook secret
 * as whether one exists and its dates. The last line, `end`, counts the lines before it; a
 * failure throws before it, so a cut archive never looks whole.
 */
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { JobsApi, JsonDocument, WatchesApi, WebhookSecretsApi } from '@subx/backends';
import { isAppError } from '@subx/errors';
import { DAY_MS, utcDate } from '@subx/credits';
import type { ApiKeys } from '../access/api-keys.ts';
import type { WorkspaceMembers } from '../access/workspace-members.ts';
import type { AccountProfile } from '../access/types.ts';
import type { UsageReader } from '../access/usage.ts';
import type { AuditReader } from '../domain/audit-log.ts';

export const EXPORT_FORMAT = 'subx-account-export/1';

/** Jobs per page of the job list, results per page of a job (a result may be a whole transcript). */
const EXPORT_JOBS_PAGE = 100;
const EXPORT_RESULTS_PAGE = 25;
/** The audit log's largest page. */
const EXPORT_AUDIT_PAGE = 200;
/** Days of usage, today included. */
const EXPORT_USAGE_DAYS = 90;
/**
 * Pages one listing may take: far beyond any account (1,000 pages of 100 jobs), it only stops a
 * listing whose cursor never ends from streaming forever.
 */
const MAX_PAGES = 1_000;

/** Where the export reads; a part that is absent is left out of the archive. */
export interface ExportSources {
  members?: Pick<WorkspaceMembers, 'list'>;
  apiKeys?: Pick<ApiKeys, 'list'>;
  webhookSecrets?: Pick<WebhookSecretsApi, 'metadata'>;
  watches?: Pick<WatchesApi, 'list'>;
  jobs?: Pick<JobsApi, 'list' | 'results'>;
  usage?: UsageReader;
  audit?: AuditReader;
}

type Line = Record<string, unknown> & { type: string };

/** `type` first, and always the export's own, whatever the document holds. */
function line(type: string, fields: object): Line {
  return Object.assign({ type }, fields, { type });
}

/** The pages of a cursor listing until its `next_cursor` is null; throws on a listing that never ends. */
async function* pages<P>(
  what: string,
  read: (cursor: string | undefined) => Promise<P>,
  nextOf: (page: P) => unknown,
): AsyncGenerator<P> {
  let cursor: string | undefined;
  for (let n = 0; n < MAX_PAGES; n += 1) {
    const page = await read(cursor);
    yield page;
    const next = nextOf(page);
    if (typeof next !== 'string' || next === '' || next === cursor) return;
    cursor = next;
  }
  throw new Error(`${what}: more than ${MAX_PAGES} pages`);
}

const arrayOf = (doc: JsonDocument, field: string): JsonDocument[] =>
  Array.isArray(doc[field]) ? (doc[field] as JsonDocument[]) : [];

/** A job whose results expired (or the job itself, between the listing and the read): none to export. */
const isGone = (err: unknown) =>
  isAppError(err) && (err.code === 'JOB_EXPIRED' || err.code === 'JOB_NOT_FOUND');

async function* jobLines(jobs: ExportSources['jobs'] & object, accountId: string): AsyncGenerator<Line> {
  const listing = pages(
    'the job list',
    (cursor) => jobs.list(accountId, { limit: EXPORT_JOBS_PAGE, ...(cursor ? { cursor } : {}) }),
    (page) => page.next_cursor,
  );
  for await (const page of listing) {
    for (const job of arrayOf(page, 'jobs')) {
      yield line('job', job);
      const jobId = String(job.job_id);
      const results = pages(
        `the results of ${jobId}`,
        (cursor) =>
          jobs.results(accountId, jobId, { limit: EXPORT_RESULTS_PAGE, ...(cursor ? { cursor } : {}) }),
        (resultPage) => resultPage.next_cursor,
      );
      try {
        for await (const resultPage of results) {
          for (const result of arrayOf(resultPage, 'results'))
            yield line('job_result', { job_id: jobId, ...result });
        }
      } catch (err) {
        if (!isGone(err)) throw err;
      }
    }
  }
}

async function* auditLines(audit: AuditReader, accountId: string): AsyncGenerator<Line> {
  const listing = pages(
    'the audit log',
    (cursor) => audit.list(accountId, { limit: EXPORT_AUDIT_PAGE, cursor: cursor ?? null }),
    (page) => page.next_cursor,
  );
  for await (const page of listing) {
    for (const event of page.events) yield line('audit_event', event);
  }
}

/** Every line but the first and the last. */
async function* bodyLines(
  sources: ExportSources,
  profile: AccountProfile,
  nowMs: number,
): AsyncGenerator<Line> {
  const accountId = profile.id;
  yield line('account', {
    id: profile.id,
    tier: profile.tier,
    credits_balance: profile.credits_balance,
    created_at: profile.created_at,
    email: profile.email,
  });
  for (const member of (await sources.members?.list(accountId)) ?? []) yield line('member', member);
  for (const key of (await sources.apiKeys?.list(accountId)) ?? []) yield line('key', key);
  if (sources.webhookSecrets) {
    const { exists, created_at, previous_secret_expires_at } =
      await sources.webhookSecrets.metadata(accountId);
    // Named fields only: whatever else the job service may add to its answer stays out.
    yield line('webhook_secret', { exists, created_at, previous_secret_expires_at });
  }
  if (sources.watches) {
    for (const watch of arrayOf(await sources.watches.list(accountId), 'watches')) yield line('watch', watch);
  }
  if (sources.jobs) yield* jobLines(sources.jobs, accountId);
  if (sources.usage) {
    const to = utcDate(nowMs);
    const from = utcDate(nowMs - (EXPORT_USAGE_DAYS - 1) * DAY_MS);
    const usage = await sources.usage.getUsage({ accountId, from, to });
    for (const day of usage.days) yield line('usage_day', day);
  }
  if (sources.audit) yield* auditLines(sources.audit, accountId);
}

/**
 * The archive's lines, each a JSON text ending in a newline: `export`, the account's data, then
 * `end` with the count of the lines before it. A failing read rejects the next pull, and `end` is
 * never written.
 */
export async function* accountExportLines(
  sources: ExportSources,
  profile: AccountProfile,
  nowMs: number,
): AsyncGenerator<string> {
  let lines = 1;
  yield `${JSON.stringify(
    line('export', {
      format: EXPORT_FORMAT,
      account_id: profile.id,
      exported_at: new Date(nowMs).toISOString(),
    }),
  )}\n`;
  for await (const body of bodyLines(sources, profile, nowMs)) {
    lines += 1;
    yield `${JSON.stringify(body)}\n`;
  }
  yield `${JSON.stringify(line('end', { lines }))}\n`;
}

/**
 * Answers the archive (the public route and its admin twin): JSON lines streamed with backpressure
 * as an attachment, never cached. The headers are out before the lines are read, so a read that
 * fails mid-way cuts the connection without the `end` line (the reader knows the archive is
 * incomplete) and is logged here.
 */
export function sendAccountExport(
  request: FastifyRequest,
  reply: FastifyReply,
  archive: { sources: ExportSources; profile: AccountProfile; nowMs: number },
): FastifyReply {
  const { sources, profile, nowMs } = archive;
  const lines = accountExportLines(sources, profile, nowMs);
  async function* logged(): AsyncGenerator<string> {
    try {
      yield* lines;
    } catch (err) {
      request.log.error({ err, account_id: profile.id }, 'account export failed mid-stream');
      throw err;
    }
  }
  const date = new Date(nowMs).toISOString().slice(0, 10);
  return (
    reply
      .type('application/x-ndjson; charset=utf-8')
      .header('content-disposition', `attachment; filename="subx-export-${profile.id}-${date}.jsonl"`)
      // Everything the account holds: no cache between us and the caller keeps it.
      .header('cache-control', 'no-store')
      .send(Readable.from(logged()))
  );
}
