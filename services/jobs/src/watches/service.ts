/**
 * The watches API and its runs. A run lists the source's newest videos (WATCH_LIST_MAX), keeps
 * those it has not seen, starts one bulk job for them (charged as jobs are, item by item), and
 * records them as seen; then a `watch.new_videos` event and webhook follow. A first run without
 * `backfill` only records what exists. Upcoming premieres and streams live right now are not
 * counted as seen: they cannot be read yet, and are new on the run after they can.
 */
import { createHash } from 'node:crypto';
import { AppError, Errors, plural } from '@subx/errors';
import { parseChannelUrl } from '@subx/youtube';
import type { Clock, Logger } from '@subx/ports';
import type { AccessPricing } from '@subx/credits';
import type { Account } from '@subx/credits';
import type { ExtractorBackend } from '@subx/backends';
import type { JobOptions } from '../jobs/model.ts';
import type { ChannelTabName } from '@subx/public-api';
import type { JobsService } from '../jobs/service.ts';
import { CHANNEL_TAB_OF, normalizedSearch, watchUrl } from '../jobs/sources.ts';
import { searchFiltersOf } from '@subx/public-api';
import { playlistIdOf } from '@subx/public-api';
import type { WebhookDeliveries } from '../webhooks/index.ts';
import { WATCH_PENDING_MAX, WATCH_SEEN_MAX, newWatchId, watchView } from './model.ts';
import type { WatchDoc, WatchPending, WatchRun, WatchSource, WatchView } from './model.ts';
import { fairTurns } from './fair-turns.ts';
import { settlePending } from './pending.ts';
import { prependSeen, seenAt } from './history.ts';
import type { WatchStore } from './store.ts';

export type WatchEventType = 'watch.created' | 'watch.new_videos' | 'watch.run_failed' | 'watch.deleted';

export interface WatchEventSink {
  publish(type: WatchEventType, watch: WatchDoc, run: WatchRun | null): Promise<void>;
}

export interface CreateWatchInput {
  source:
    | { type: 'channel'; url: string; tab?: ChannelTabName }
    | { type: 'playlist'; url: string }
    | (Omit<Extract<WatchSource, { type: 'search' }>, 'type'> & { type: 'search' });
  interval_minutes: number;
  backfill: boolean;
  webhook_url?: string;
  options: JobOptions;
}

interface RunOutcome {
  new_videos: number;
  retried_videos: number;
  job_id: string | null;
}

export interface WatchesService {
  create(account: Account, input: CreateWatchInput, requestId: string): Promise<WatchView>;
  get(accountId: string, watchId: string): Promise<WatchView>;
  list(accountId: string): Promise<{ watches: WatchView[] }>;
  delete(accountId: string, watchId: string): Promise<{ watch_id: string; deleted: true }>;
  /** Runs the watch now (POST …/run): 409 CONFLICT while another run of it is under way. */
  runNow(account: Account, watchId: string): Promise<RunOutcome>;
  /** Pauses the account's watches created with this key (it was revoked after a compromise); their ids. */
  pauseCreatedWith(accountId: string, keyId: string): Promise<string[]>;
  /** Runs a paused watch again, the next run at once (a watch that is not paused is left as it is). */
  resume(accountId: string, watchId: string): Promise<WatchView>;
  /**
   * The scheduler's tick: runs up to `limit` due watches, accounts taking turns
   * (WATCH_RUNS_PER_ACCOUNT_PER_POLL each), WATCH_RUN_CONCURRENCY at a time; how many ran.
   */
  runDue(limit: number): Promise<number>;
}

/** One account's share of a poll: the rest of its due watches wait for the next poll. */
export const WATCH_RUNS_PER_ACCOUNT_PER_POLL = 2;
/** Runs of a poll under way at once (each mostly waits on the platform's listing). */
export const WATCH_RUN_CONCURRENCY = 4;

const notFound = (watchId: string) =>
  new AppError('NOT_FOUND', `No watch ${watchId} exists for this account.`, {
    details: { field: 'watch_id' },
  });

export function createWatchesService(deps: {
  store: WatchStore;
  jobs: Pick<JobsService, 'create' | 'results'>;
  extractor: Pick<ExtractorBackend, 'listChannelVideos' | 'listPlaylistVideos' | 'listSearchVideos'>;
  /** The account behind a scheduled run (its tier now); null: gone, the run is skipped. */
  accountOf(accountId: string): Promise<Account | null>;
  /**
   * Counts a scheduled run (its listing of the platform) against the account's daily request
   * limit, as a run through POST …/run counts; false: the limit is reached and the run is skipped.
   * Absent: scheduled runs are not counted.
   */
  countScheduledRun?(account: Account): Promise<boolean>;
  events: WatchEventSink;
  webhooks: Pick<WebhookDeliveries, 'enqueue' | 'checkTarget'> | null;
  pricing: AccessPricing;
  clock: Clock;
  logger: Pick<Logger, 'warn' | 'info'>;
  instanceId: string;
  /** The account's `watch_history_days` when a watch is made (services/jobs/src/retention); absent: none. */
  historyDaysOf?: (accountId: string) => Promise<number | null>;
  config: {
    WATCH_LEASE_MS: number;
    WATCH_LIST_MAX: number;
    WATCH_LISTING_TIMEOUT_MS: number;
    WATCH_CAPTION_RETRY_HOURS: number;
  };
}): WatchesService {
  const { store, clock, config, pricing } = deps;

  /** The source's newest videos that can be read now, in the source's order. */
  async function readable(watch: WatchDoc): Promise<string[]> {
    const options = { deadlineMs: config.WATCH_LISTING_TIMEOUT_MS, requestId: `${watch._id}.run` };
    const max = config.WATCH_LIST_MAX;
    const s = watch.source;
    if (s.type === 'playlist') {
      const listed = await deps.extractor.listPlaylistVideos(
        { playlistId: playlistIdOf(s.url), maxVideos: max },
        options,
      );
      return listed.videoIds;
    }
    if (s.type === 'channel') {
      const listed = await deps.extractor.listChannelVideos(
        { url: s.url, tab: CHANNEL_TAB_OF[s.tab], maxVideos: max },
        options,
      );
      return listed.videos.filter((v) => !v.isLive && !v.isUpcoming).map((v) => v.videoId);
    }
    const listed = await deps.extractor.listSearchVideos(
      {
        query: s.query,
        filters: searchFiltersOf(s),
        maxVideos: max,
      },
      options,
    );
    return listed.videos.filter((v) => !v.isLive && !v.isUpcoming).map((v) => v.id);
  }

  async function announce(
    type: WatchEventType,
    watch: WatchDoc,
    run: WatchRun | null,
    videoIds: string[] = [],
  ) {
    try {
      await deps.events.publish(type, watch, run);
    } catch (err) {
      deps.logger.warn({ err, watch_id: watch._id, type }, 'publishing a watch event failed');
    }
    if (type !== 'watch.new_videos' || !run || !watch.webhook_url || !deps.webhooks) return;
    try {
      await deps.webhooks.enqueue({
        accountId: watch.account_id,
        url: watch.webhook_url,
        // One delivery per run: a repeated enqueue of the same run is a no-op.
        subject: `${watch._id}:run-${run.run}`,
        event: 'watch.new_videos',
        data: {
          watch_id: watch._id,
          run: run.run,
          new_videos: run.new_videos,
          video_ids: videoIds,
          job_id: run.job_id,
        },
      });
    } catch (err) {
      deps.logger.warn({ err, watch_id: watch._id }, 'enqueueing a watch webhook failed');
    }
  }

  /** One run of a watch the caller holds the lease of; records it and gives the lease back. */
  async function run(
    watch: WatchDoc,
    account: Account,
    owner: string,
  ): Promise<RunOutcome & { failure: AppError | null }> {
    const now = clock.now();
    const number = watch.runs + 1;
    const nextRunAt = now + watch.interval_minutes * 60_000;
    let seen = watch.seen;
    let seenMarks = watch.seen_marks ?? [];
    const retryMs = config.WATCH_CAPTION_RETRY_HOURS * 3_600_000;
    // What became of the videos earlier runs handed to jobs: those without captions yet go again.
    const settled = await settlePending({
      jobs: deps.jobs,
      accountId: watch.account_id,
      pending: watch.pending ?? [],
      nowMs: now,
      retryMs,
      onReadError: (err, jobId) =>
        deps.logger.warn({ err, watch_id: watch._id, job_id: jobId }, 'reading a watch job failed'),
    });
    if (settled.givenUp > 0)
      deps.logger.info(
        { watch_id: watch._id, videos: settled.givenUp },
        'a watch stopped retrying videos whose captions are still missing',
      );
    let pending: WatchPending[] = [
      ...settled.retry.map((p) => ({ ...p, job_id: null })),
      ...settled.following,
    ];
    let last: WatchRun;
    /** The videos handed to this run's job (none when it failed or only recorded). */
    let delivered: string[];
    let failure: AppError | null = null;
    try {
      const listed = await readable(watch);
      const known = new Set(watch.seen);
      let fresh = [...new Set(listed)].filter((id) => !known.has(id));
      const freshSet = new Set(fresh);
      const retry = settled.retry.filter((p) => !freshSet.has(p.video_id));
      let jobId: string | null = null;
      if (number === 1 && !watch.backfill) {
        fresh = [];
        ({ seen, marks: seenMarks } = seenAt([...new Set(listed)], now, WATCH_SEEN_MAX));
      } else if (fresh.length + retry.length > 0) {
        const job = await deps.jobs.create(
          account,
          {
            source: { type: 'urls', urls: [...fresh, ...retry.map((p) => p.video_id)].map(watchUrl) },
            options: watch.options,
            ...(watch.webhook_url ? { webhook_url: watch.webhook_url } : {}),
          },
          `${watch._id}.run-${number}`,
        );
        jobId = job.job_id;
        ({ seen, marks: seenMarks } = prependSeen(watch.seen, watch.seen_marks, fresh, now, WATCH_SEEN_MAX));
        if (retryMs > 0)
          pending = [
            ...fresh.map((video_id) => ({ video_id, first_seen: now, job_id: job.job_id })),
            ...retry.map((p) => ({ ...p, job_id: job.job_id })),
            ...settled.following,
          ];
      }
      last = {
        at: now,
        run: number,
        new_videos: fresh.length,
        retried_videos: jobId ? retry.length : 0,
        job_id: jobId,
        error: null,
      };
      delivered = fresh;
    } catch (err) {
      const e = err instanceof AppError ? err : Errors.internal(err);
      failure = e;
      if (!(err instanceof AppError)) deps.logger.warn({ err, watch_id: watch._id }, 'a watch run failed');
      last = {
        at: now,
        run: number,
        new_videos: 0,
        retried_videos: 0,
        job_id: null,
        error: { code: e.code, message: e.message },
      };
      delivered = [];
    }
    const recorded = await store.finishRun(watch._id, owner, {
      seen: seen.slice(0, WATCH_SEEN_MAX),
      seenMarks,
      pending: pending.slice(0, WATCH_PENDING_MAX),
      last,
      nextRunAt,
      nowMs: clock.now(),
    });
    if (!recorded) deps.logger.warn({ watch_id: watch._id }, 'a watch run lost its lease before recording');
    const after = { ...watch, runs: number, last_run: last };
    if (last.error) await announce('watch.run_failed', after, last);
    else if (last.job_id && delivered.length > 0) await announce('watch.new_videos', after, last, delivered);
    return {
      new_videos: last.new_videos,
      retried_videos: last.retried_videos ?? 0,
      job_id: last.job_id,
      failure,
    };
  }

  /** Records a scheduled run that did not happen (the account is gone, or at its daily limit). */
  async function skip(held: WatchDoc, owner: string, error: { code: string; message: string }) {
    await store.finishRun(held._id, owner, {
      seen: held.seen,
      pending: held.pending ?? [],
      last: { at: clock.now(), run: held.runs, new_videos: 0, job_id: null, error },
      nextRunAt: clock.now() + held.interval_minutes * 60_000,
      nowMs: clock.now(),
    });
  }

  /** One due watch, claimed and run by the scheduler; false when it did not run. */
  async function runScheduled(candidate: WatchDoc): Promise<boolean> {
    const owner = `${deps.instanceId}:scheduler`;
    const held = await store.claim(candidate._id, owner, clock.now(), config.WATCH_LEASE_MS);
    if (!held) return false;
    const account = await deps.accountOf(held.account_id);
    if (!account) {
      // The account is gone: nothing to run for; look again at the next interval.
      await skip(held, owner, {
        code: 'UNAUTHORIZED',
        message: 'The account of this watch no longer exists.',
      });
      return false;
    }
    if (deps.countScheduledRun && !(await deps.countScheduledRun(account))) {
      await skip(held, owner, {
        code: 'RATE_LIMITED',
        message: "The account's daily request limit was reached; the watch runs again at its next interval.",
      });
      return false;
    }
    // The run's job belongs to the key that made the watch, so that revoking it stops both.
    await run(held, held.key_id ? { ...account, keyId: held.key_id } : account, owner);
    return true;
  }

  return {
    async create(account, input, requestId) {
      const max = pricing.watchMax[account.tier];
      if (max === 0)
        throw new AppError(
          'TIER_REQUIRED',
          `Watches need the Pro tier or higher; this key is ${account.tier}.`,
        );
      let source: WatchSource;
      const given = input.source;
      if (given.type === 'playlist') {
        playlistIdOf(given.url);
        source = { type: 'playlist', url: given.url };
      } else if (given.type === 'channel') {
        const parsed = parseChannelUrl(given.url);
        if (!parsed)
          throw Errors.invalidUrl(
            'The URL is not an accepted channel URL (/@handle, /channel/UC…, /c/name or /user/name).',
          );
        source = {
          type: 'channel',
          url: given.url,
          tab: given.tab ?? (parsed.tab as ChannelTabName | undefined) ?? 'videos',
        };
      } else {
        source = { type: 'search', ...normalizedSearch(given) };
      }
      const count = await store.count(account.id);
      if (count >= max)
        throw Errors.invalidRequest(
          `The ${account.tier} tier allows ${plural(max, 'watch', 'watches')} per account; this one has ${count}. Delete one first.`,
          { max_watches: max },
        );
      if (input.webhook_url !== undefined && deps.webhooks)
        await deps.webhooks.checkTarget(input.webhook_url);
      const now = clock.now();
      const historyDays = deps.historyDaysOf ? await deps.historyDaysOf(account.id) : null;
      const watch: WatchDoc = {
        _id: newWatchId(now),
        account_id: account.id,
        source,
        interval_minutes: input.interval_minutes,
        backfill: input.backfill,
        webhook_url: input.webhook_url ?? null,
        options: input.options,
        created_at: now,
        updated_at: now,
        // The first run is due at once: it records what exists (or, with backfill, starts a job).
        next_run_at: now,
        runs: 0,
        last_run: null,
        seen: [],
        seen_marks: [],
        ...(historyDays === null ? {} : { history_days: historyDays, history_check_at: now }),
        lease_owner: null,
        lease_until: 0,
        request_id: requestId,
        ...(account.keyId ? { key_id: account.keyId } : {}),
        paused: null,
      };
      await store.create(watch);
      await announce('watch.created', watch, null);
      return watchView(watch);
    },

    async get(accountId, watchId) {
      const watch = await store.get(accountId, watchId);
      if (!watch) throw notFound(watchId);
      return watchView(watch);
    },

    async list(accountId) {
      return { watches: (await store.list(accountId, 10_000)).map(watchView) };
    },

    async delete(accountId, watchId) {
      const watch = await store.get(accountId, watchId);
      if (!watch || !(await store.delete(accountId, watchId))) throw notFound(watchId);
      await announce('watch.deleted', watch, null);
      return { watch_id: watchId, deleted: true };
    },

    pauseCreatedWith: (accountId, keyId) =>
      store.pauseCreatedWith(accountId, keyId, { at: clock.now(), reason: 'key_compromised' }),

    async resume(accountId, watchId) {
      const watch = await store.get(accountId, watchId);
      if (!watch) throw notFound(watchId);
      const resumed = watch.paused ? await store.resume(accountId, watchId, clock.now()) : null;
      return watchView(resumed ?? watch);
    },

    async runNow(account, watchId) {
      if (!(await store.get(account.id, watchId))) throw notFound(watchId);
      const owner = `${deps.instanceId}:${createHash('sha256').update(`${watchId}${clock.now()}`).digest('hex').slice(0, 8)}`;
      const held = await store.claim(watchId, owner, clock.now(), config.WATCH_LEASE_MS);
      if (!held)
        throw new AppError(
          'CONFLICT',
          `A run of watch ${watchId} is under way; retry when it has finished.`,
          {
            retryAfterSeconds: Math.ceil(config.WATCH_LEASE_MS / 1000),
          },
        );
      const outcome = await run(held, account, owner);
      // Recorded as the watch's last run; the caller hears the error itself.
      if (outcome.failure) throw outcome.failure;
      return {
        new_videos: outcome.new_videos,
        retried_videos: outcome.retried_videos,
        job_id: outcome.job_id,
      };
    },

    async runDue(limit) {
      const turns = await fairTurns(store, {
        nowMs: clock.now(),
        limit,
        perAccount: WATCH_RUNS_PER_ACCOUNT_PER_POLL,
      });
      let ran = 0;
      let next = 0;
      const worker = async () => {
        while (next < turns.length) {
          const candidate = turns[next++]!;
          try {
            if (await runScheduled(candidate)) ran++;
          } catch (err) {
            // One watch's failure (a store error) does not hold up the others of this poll.
            deps.logger.warn({ err, watch_id: candidate._id }, 'a scheduled watch run failed');
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(WATCH_RUN_CONCURRENCY, turns.length) }, worker));
      return ran;
    },
  };
}
