/**
 * The jobs API's behaviour, apart from HTTP: the public routes (jobs/routes.ts) and the admin
 * list for the dashboard call the same functions.
 */
import { chunksOfItem, withChunks } from '@subx/public-api';
import { AppError, ERROR_CATALOG, Errors, plural } from '@subx/errors';
import type { ErrorCode } from '@subx/errors';
import type { Clock } from '@subx/ports';
import { parseChannelUrl } from '@subx/youtube';
import { itemsPrice } from '@subx/credits';
import { itemCharges, type DurationOf } from '@subx/credits';
import type { AccessPricing } from '@subx/credits';
import type { Account, CreditLedger } from '@subx/credits';
import { playlistIdOf, tryVideoIdOf } from '@subx/public-api';
import { decodeCursor, encodeCursor, isTerminal, jobView } from './model.ts';
import type { JobDoc, JobItem, JobOptions, JobSource, JobView } from './model.ts';
import type { ChannelTabName } from '@subx/public-api';
import type { JobNotifier } from './notify.ts';
import { normalizedSearch } from './sources.ts';
import type { JobStore } from './store.ts';
import { newJobId } from './store.ts';
import { finishTtls, fixedTtls, type JobTtlsOf } from './ttls.ts';
import type { WebhookDeliveries, WebhookDeliveryState } from '../webhooks/index.ts';

/** What GET /jobs/{id} shows of the webhook: the outbox's record once the job has ended, `waiting` before. */
type WebhookState =
  | WebhookDeliveryState
  | {
      url: string;
      status: 'waiting';
      event: null;
      webhook_id: null;
      attempts: WebhookDeliveryState['attempts'];
      next_attempt_at: null;
    };

/** The webhook module's side, as the jobs API needs it (src/webhooks). */
export type JobWebhooks = Pick<WebhookDeliveries, 'stateOf' | 'checkTarget'>;

type PublicJob = JobView & { webhook: WebhookState | null };

export interface CreateJobInput {
  source:
    | { type: 'urls'; urls: string[] }
    | { type: 'playlist'; url: string; max?: number }
    | { type: 'channel'; url: string; tab?: ChannelTabName; max?: number }
    | (Omit<Extract<JobSource, { type: 'search' }>, 'max' | 'search_type'> & {
        search_type?: 'video';
        max?: number;
      });
  options: JobOptions;
  webhook_url?: string;
}

/** What a dry run answers: the job's size and most it can cost, nothing created or reserved. */
interface JobEstimate {
  /** Items the job would hold; for a playlist, channel or search source its `max` (not listed). */
  items: number;
  /** Credits the job costs at most: every item succeeding. */
  credits_max: number;
  /** URLs dropped because they name a video already in the list (urls sources only). */
  duplicates_removed: number;
}

interface JobPlan {
  source: JobDoc['source'];
  items: JobItem[] | null;
  duplicatesRemoved: number;
}

/**
 * One item per video: youtu.be/ID, watch?v=ID&t=5 and shorts/ID name the same video, which is
 * extracted (and charged) once, at its first place. URLs that are not video URLs are kept as they
 * are (each becomes an INVALID_URL item), deduplicated by their text.
 */
function uniqueVideos(urls: readonly string[]): { items: JobItem[]; duplicatesRemoved: number } {
  const seen = new Set<string>();
  const items: JobItem[] = [];
  for (const url of urls) {
    const videoId = tryVideoIdOf(url);
    const key = videoId === null ? `url:${url}` : `video:${videoId}`;
    if (seen.has(key)) continue;
    seen.add(key);
    items.push({ url, video_id: videoId });
  }
  return { items, duplicatesRemoved: urls.length - items.length };
}

export interface JobsService {
  create(account: Account, input: CreateJobInput, requestId: string): Promise<PublicJob>;
  /** The dry run of create: the same checks, then the job's size and price; nothing is created. */
  estimate(account: Account, input: CreateJobInput, durationOf: DurationOf): Promise<JobEstimate>;
  get(accountId: string, jobId: string): Promise<PublicJob>;
  list(
    accountId: string,
    page: { limit: number; cursor?: string },
  ): Promise<{ jobs: PublicJob[]; next_cursor: string | null }>;
  results(
    accountId: string,
    jobId: string,
    page: { limit: number; cursor?: string },
  ): Promise<{
    job_id: string;
    status: string;
    results: Record<string, unknown>[];
    next_cursor: string | null;
  }>;
  /** One finished item (its failure as the error it was), with the job's format. */
  result(
    accountId: string,
    jobId: string,
    index: number,
  ): Promise<{ job: JobDoc; item: Record<string, unknown> }>;
  cancel(accountId: string, jobId: string): Promise<PublicJob>;
  /** Cancels the account's queued and running jobs created with this key; their ids. */
  cancelCreatedWith(accountId: string, keyId: string): Promise<string[]>;
  /**
   * The chunks of the finished items, in source order, one JSON object a line with its `video_id`
   * (NDJSON, the shape vector stores import); read a page of results at a time.
   */
  chunkLines(accountId: string, jobId: string): Promise<AsyncIterable<string>>;
}

/** Results read per page when a job's chunks are downloaded: one page in memory at a time. */
const CHUNK_PAGE = 50;

/**
 * Videos whose duration one dry run reads (through the extractor, from its metadata cache when it
 * has them): an estimate is free, so the platform must not be asked about 10,000 videos for it.
 * The rest are priced at the tier's longest transcription, which no item of the job exceeds.
 */
export const DRY_RUN_DURATION_LOOKUPS = 20;

/** A full queue frees up as jobs start: a minute is a fair first wait. */
const JOB_QUEUE_RETRY_AFTER_S = 60;

export function createJobsService(deps: {
  store: JobStore;
  notifier: JobNotifier;
  webhooks: JobWebhooks | null;
  credits: CreditLedger;
  pricing: AccessPricing;
  clock: Clock;
  /** The deployment's JOB_RESULTS_TTL: how long results are kept where the account sets nothing. */
  resultsTtlMs: number;
  /** The account's retention when a job ends (services/jobs/src/retention); absent: `resultsTtlMs`. */
  ttlsOf?: JobTtlsOf;
}): JobsService {
  const { store, notifier, clock, pricing } = deps;
  const ttlsOf = deps.ttlsOf ?? fixedTtls(deps.resultsTtlMs);

  async function webhookOf(job: JobDoc): Promise<WebhookState | null> {
    if (!job.webhook_url) return null;
    const state = deps.webhooks ? await deps.webhooks.stateOf(job._id) : null;
    return (
      state ?? {
        url: job.webhook_url,
        status: 'waiting',
        event: null,
        webhook_id: null,
        attempts: [],
        next_attempt_at: null,
      }
    );
  }

  async function show(job: JobDoc): Promise<PublicJob> {
    return { ...jobView(job), webhook: await webhookOf(job) };
  }

  async function owned(accountId: string, jobId: string): Promise<JobDoc> {
    const job = await store.get(accountId, jobId);
    // Another account's job answers exactly as a job that does not exist.
    if (!job) throw Errors.jobNotFound(jobId);
    return job;
  }

  function expired(job: JobDoc): boolean {
    return job.results_purged || (job.expires_at !== null && clock.now() >= job.expires_at);
  }

  /** Whether the job's chunks are past the account's `chunks_days` (they end with its results at the latest). */
  function chunksExpired(job: JobDoc): boolean {
    const at = job.chunks_expire_at;
    return expired(job) || job.chunks_purged === true || (typeof at === 'number' && clock.now() >= at);
  }

  /** The item as a results page shows it: its chunks only while they are kept. */
  const asShown = (job: JobDoc, item: Record<string, unknown>) =>
    chunksExpired(job) ? item : withChunks(job, item);

  function cursorIndex(cursor: string | undefined): number {
    if (cursor === undefined) return 0;
    const value = decodeCursor(cursor)?.i;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
      throw Errors.invalidRequest('The cursor is not one this API returned.');
    }
    return value;
  }

  /**
   * The job a request describes, checked against the tier: its source and, for a list of URLs, its
   * items with the duplicates removed. Shared by create and the dry run's estimate.
   */
  function plan(account: Account, input: CreateJobInput): JobPlan {
    const maxItems = pricing.jobMaxItems[account.tier];
    if (maxItems <= 0) {
      throw new AppError('TIER_REQUIRED', `Bulk jobs need a paid tier; the ${account.tier} tier has none.`);
    }
    const tooMany = (n: number) =>
      Errors.invalidRequest(
        `The ${account.tier} tier allows up to ${plural(maxItems, 'item')} per job; this job asks for ${n}.`,
        { max_items: maxItems },
      );
    let source: JobDoc['source'];
    let items: JobItem[] | null = null;
    let duplicatesRemoved = 0;
    const given = input.source;
    if (given.type === 'urls') {
      const unique = uniqueVideos(given.urls);
      items = unique.items;
      duplicatesRemoved = unique.duplicatesRemoved;
      if (items.length > maxItems) throw tooMany(items.length);
      source = { type: 'urls', count: items.length };
    } else if (given.type === 'playlist') {
      playlistIdOf(given.url);
      const max = given.max ?? maxItems;
      if (max > maxItems) throw tooMany(max);
      source = { type: 'playlist', url: given.url, max };
    } else if (given.type === 'search') {
      const { query, ...filters } = normalizedSearch(given);
      const max = given.max ?? maxItems;
      if (max > maxItems) throw tooMany(max);
      source = { type: 'search', query, search_type: 'video', max, ...filters } satisfies JobSource;
    } else {
      const parsed = parseChannelUrl(given.url);
      if (!parsed) {
        throw Errors.invalidUrl(
          'The URL is not an accepted channel URL (/@handle, /channel/UC…, /c/name or /user/name).',
        );
      }
      const max = given.max ?? maxItems;
      if (max > maxItems) throw tooMany(max);
      const tab: ChannelTabName = given.tab ?? (parsed.tab as ChannelTabName | undefined) ?? 'videos';
      source = { type: 'channel', url: given.url, tab, max } satisfies JobSource;
    }
    return { source, items, duplicatesRemoved };
  }

  return {
    async create(account, input, requestId) {
      const { source, items } = plan(account, input);
      // A cap on waiting jobs per account: one account cannot fill the queue for everyone (the
      // runner takes accounts in turn, and this bounds how long its own turn list grows).
      const open = await store.countOpen(account.id);
      const maxQueued = pricing.jobMaxQueued[account.tier];
      if (open.queued >= maxQueued) {
        throw new AppError(
          'RATE_LIMITED',
          `The ${account.tier} tier may have ${plural(maxQueued, 'job')} waiting to start; ${open.queued} are. Retry when one has started.`,
          { retryAfterSeconds: JOB_QUEUE_RETRY_AFTER_S, details: { max_queued: maxQueued } },
        );
      }
      if (input.webhook_url !== undefined && deps.webhooks)
        await deps.webhooks.checkTarget(input.webhook_url);
      // A job the balance cannot pay a single item of would fail at its first window: say so now.
      const perItem = itemsPrice(1, pricing);
      if (perItem > 0) {
        const probe = await deps.credits.reserve({
          accountId: account.id,
          operation: 'jobs',
          amount: perItem,
          requestId,
        });
        await probe.release();
      }
      const now = clock.now();
      const job: JobDoc = {
        _id: newJobId(now),
        account_id: account.id,
        status: 'queued',
        source,
        source_info: null,
        options:
          (input.options.mode ?? 'captions') === 'captions'
            ? input.options
            : { ...input.options, max_audio_seconds: pricing.transcribeMaxSeconds[account.tier] },
        webhook_url: input.webhook_url ?? null,
        total: items ? items.length : null,
        next_index: 0,
        succeeded: 0,
        failed: 0,
        credits_charged: 0,
        error: null,
        created_at: now,
        updated_at: now,
        started_at: null,
        finished_at: null,
        expires_at: null,
        purge_at: null,
        results_purged: false,
        lease_owner: null,
        lease_until: 0,
        notified: false,
        request_id: requestId,
        ...(account.keyId ? { key_id: account.keyId } : {}),
        queue_rank: open.queued + open.running,
      };
      await store.create(job, items);
      await notifier.created(job);
      return show(job);
    },

    async estimate(account, input, durationOf) {
      const { source, items, duplicatesRemoved } = plan(account, input);
      if (input.webhook_url !== undefined && deps.webhooks)
        await deps.webhooks.checkTarget(input.webhook_url);
      // A playlist, channel or search is not listed here (that can take many pages): its `max` is
      // the upper bound of what the job holds.
      const count = items ? items.length : 'max' in source ? source.max : 0;
      // A URL list's videos are known: with `mode`, their durations price the transcriptions. An
      // unlisted source's are not: its bound counts the item and translation prices only.
      const videoIds = items
        ? items.map((item) => item.video_id)
        : Array.from({ length: count }, (_, i) => `unlisted-${i}`);
      const options = { translate: input.options.translate, mode: input.options.mode ?? 'captions' };
      const tierCap = pricing.transcribeMaxSeconds[account.tier];
      let lookups = 0;
      const boundedDurationOf: DurationOf = (videoId) =>
        lookups++ < DRY_RUN_DURATION_LOOKUPS ? durationOf(videoId) : Promise.resolve(tierCap);
      const charges = await itemCharges(
        videoIds,
        items ? options : { ...options, mode: 'captions' },
        pricing,
        boundedDurationOf,
      );
      return { items: count, credits_max: charges.total, duplicates_removed: duplicatesRemoved };
    },

    async get(accountId, jobId) {
      return show(await owned(accountId, jobId));
    },

    async list(accountId, page) {
      let beforeId: string | undefined;
      if (page.cursor !== undefined) {
        const value = decodeCursor(page.cursor)?.b;
        if (typeof value !== 'string' || value.length > 64)
          throw Errors.invalidRequest('The cursor is not one this API returned.');
        beforeId = value;
      }
      const found = await store.list(accountId, { limit: page.limit + 1, ...(beforeId ? { beforeId } : {}) });
      const jobs = found.slice(0, page.limit);
      return {
        jobs: await Promise.all(jobs.map(show)),
        next_cursor: found.length > page.limit ? encodeCursor({ b: jobs.at(-1)!._id }) : null,
      };
    },

    async results(accountId, jobId, page) {
      const job = await owned(accountId, jobId);
      if (expired(job))
        throw new AppError(
          'JOB_EXPIRED',
          `The results of job ${job._id} expired at ${new Date(job.expires_at ?? 0).toISOString()}.`,
        );
      const from = cursorIndex(page.cursor);
      const ended = isTerminal(job.status);
      // While the job runs, only the finished prefix (below next_index) is shown: an item still in
      // flight must not be skipped by a cursor that moved past it.
      const bound = ended ? Number.POSITIVE_INFINITY : job.next_index;
      const found = (await store.results(job._id, from, page.limit + 1)).filter((r) => r.index < bound);
      const shown = found.slice(0, page.limit);
      const more = found.length > page.limit;
      const nextIndex = shown.length > 0 ? shown.at(-1)!.index + 1 : from;
      return {
        job_id: job._id,
        status: job.status,
        results: shown.map((r) => asShown(job, r.item)),
        next_cursor: more || !ended ? encodeCursor({ i: nextIndex }) : null,
      };
    },

    async result(accountId, jobId, index) {
      const job = await owned(accountId, jobId);
      if (expired(job)) throw new AppError('JOB_EXPIRED', `The results of job ${job._id} expired.`);
      const found = await store.result(job._id, index);
      if (!found) {
        throw new AppError(
          'NOT_FOUND',
          `Job ${job._id} has no result at index ${index} (not finished, or past the end).`,
        );
      }
      if (!found.success) {
        const code = String(found.item.error_code ?? 'UPSTREAM_ERROR');
        const known = Object.hasOwn(ERROR_CATALOG, code) ? (code as ErrorCode) : 'UPSTREAM_ERROR';
        throw new AppError(known, String(found.item.error_message ?? 'The item failed.'));
      }
      return { job, item: asShown(job, found.item) };
    },

    async chunkLines(accountId, jobId) {
      const job = await owned(accountId, jobId);
      if (chunksExpired(job)) {
        const at = Math.min(job.chunks_expire_at ?? Infinity, job.expires_at ?? Infinity);
        throw new AppError(
          'JOB_EXPIRED',
          `The chunks of job ${job._id} expired${Number.isFinite(at) ? ` at ${new Date(at).toISOString()}` : ''}.`,
        );
      }
      if (job.options.format !== 'json' || !job.options.include_timestamps) {
        throw new AppError(
          'CONFLICT',
          `Job ${job._id} keeps ${job.options.format} documents, not timed segments: chunks need a json job with timestamps.`,
        );
      }
      const chunking = job.options.chunking ?? { maxTokens: 512, overlapTokens: 0, split: 'chapters' };
      const bound = isTerminal(job.status) ? Number.POSITIVE_INFINITY : job.next_index;
      return (async function* lines() {
        for (let from = 0; ;) {
          const page = (await store.results(job._id, from, CHUNK_PAGE)).filter((r) => r.index < bound);
          for (const { item } of page) {
            for (const chunk of chunksOfItem(item, chunking) ?? []) {
              yield `${JSON.stringify({ video_id: item.video_id, ...chunk })}\n`;
            }
          }
          if (page.length < CHUNK_PAGE) return;
          from = page.at(-1)!.index + 1;
        }
      })();
    },

    async cancelCreatedWith(accountId, keyId) {
      const canceled: string[] = [];
      for (const job of await store.openCreatedWith(accountId, keyId)) {
        const after = await this.cancel(accountId, job._id).catch((err: unknown) => {
          // It finished in between: nothing left to stop.
          if (err instanceof AppError && err.code === 'JOB_FINISHED') return null;
          throw err;
        });
        if (after) canceled.push(job._id);
      }
      return canceled;
    },

    async cancel(accountId, jobId) {
      // Two tries: the job may change state between the read and the conditional update (a
      // runner finishing it); the second read sees where it went.
      for (let attempt = 0; ; attempt++) {
        const job = await owned(accountId, jobId);
        if (job.status === 'canceled') return show(job);
        if (job.status === 'completed' || job.status === 'failed') {
          throw new AppError('JOB_FINISHED', `Job ${job._id} already ${job.status}; it cannot be canceled.`);
        }
        const running = job.status === 'running';
        const done = await store.finish(job._id, 'canceled', {
          nowMs: clock.now(),
          ...finishTtls(await ttlsOf(job.account_id)),
          // A runner holds it: it records the window in flight, then sends the notice itself.
          keepLease: running,
        });
        if (done) {
          if (!running) await notifier.notify(done);
          return show(done);
        }
        if (attempt >= 1) return show(await owned(accountId, jobId));
      }
    },
  };
}
