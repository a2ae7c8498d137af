/**
 * The job runner: every gateway runs one. It leases the oldest runnable job (queued, or running
 * under a lapsed lease), lists its playlist or channel if it has one, and works through its items
 * window by window over the bulk fan-out, saving progress after each window:
 *
 * - A window's items that already have a result (a window cut off by a crash) are neither run nor
 *   charged again; the rest get up to JOB_ITEM_ATTEMPTS rounds. Each round reserves the most its
 *   items may cost first (item-charges.ts: with `mode`, from each video's duration; the balance
 *   never goes below zero), records the results, then commits what was delivered only: failures
 *   are free, as in batch.
 * - A result is recorded before its credit is committed: a crash in between leaves an item
 *   uncharged, never charged twice.
 * - The extraction queue unreachable (every item of a round a 503) does not use up attempts: the job
 *   waits, holding its lease, up to JOB_STALL_LIMIT_MS.
 * - DELETE marks the job canceled at once; the runner stops at the next window, keeping (and
 *   charging) what the window in flight produced.
 * - An item whose stream is still live or being processed is parked, not failed (parked.ts): while
 *   only parked items are left, the job gives its lease back until the first is due.
 * - The terminal transition happens once (a conditional update); its maker hands the lifecycle
 *   event and webhook on, and a sweeper retries that for a terminal job not marked `notified`.
 */
import { Errors, isAppError, toPublicErrorBody, type AppError } from '@subx/errors';
import { backoffDelay } from '@subx/ports';
import type { Clock, Logger } from '@subx/ports';
import type { AccessPricing } from '@subx/credits';
import type { CreditLedger, Tier } from '@subx/credits';
import type { ExtractorBackend } from '@subx/backends';
import type { FanOut, FanOutOutcome } from '@subx/fanout';
import { durationsFrom, itemCharges, modelSecondsOf, overAudioCap } from '@subx/credits';
import { modelSecondsUpFront, type ModelBudget } from '@subx/credits';
import { TRANSCRIPT_MODE } from '@subx/public-api';
import { failureItem, successItem } from '@subx/public-api';
import { invalidVideoUrlMessage } from '@subx/public-api';
import type { JobSourceLister } from './sources.ts';
import { resultId, type JobDoc, type JobItem, type JobResultDoc } from './model.ts';
import type { JobStore } from './store.ts';
import type { JobNotifier } from './notify.ts';
import { jobMetrics } from './metrics.ts';
import { reserveUpTo } from './round-credits.ts';
import {
  isProcessing,
  parkedDoc,
  parkedFromDoc,
  processingRetryTime,
  resultCounts,
  retryParkedItems,
} from './parked.ts';

interface JobRunnerConfig {
  JOBS_RUNNER_CONCURRENCY: number;
  JOBS_MAX_RUNNING_PER_ACCOUNT: number;
  JOB_WINDOW_SIZE: number;
  JOB_ITEM_TIMEOUT_MS: number;
  JOB_ROUND_TIMEOUT_MS: number;
  JOB_ITEM_ATTEMPTS: number;
  JOB_STALL_LIMIT_MS: number;
  JOB_LEASE_MS: number;
  JOB_LISTING_TIMEOUT_MS: number;
  JOBS_POLL_MS: number;
  JOB_RESULTS_TTL: number;
  JOBS_QUEUED_TTL_MS: number;
  JOB_PROCESSING_WAIT_MS: number;
  JOB_PROCESSING_RETRY_MAX_SECONDS: number;
}

export interface JobRunnerDeps {
  store: JobStore;
  /** The bulk fan-out (its own topic and workers), so jobs never queue ahead of batch calls. */
  fanOut: FanOut;
  lister: JobSourceLister;
  /** Video durations, for what a transcription (`mode`) may cost. */
  extractor: Pick<ExtractorBackend, 'validateVideo'>;
  credits: CreditLedger;
  pricing: AccessPricing;
  notifier: JobNotifier;
  clock: Clock;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  config: JobRunnerConfig;
  /** Unique per gateway process: the lease owner. */
  instanceId: string;
  /** Waiting between rounds while the queue is down (tests shorten it). Default real timers. */
  sleep?: (ms: number) => Promise<void>;
  /**
   * The accounts' daily model budget, and each account's tier for it: a round of items that may
   * need audio transcribed takes their length first, retries included (@subx/credits, model-budget.ts).
   * Absent (tests of other concerns): no budget is kept.
   */
  modelBudget?: { budget: ModelBudget; tierOf(accountId: string): Promise<Tier | null> };
}

export interface JobRunner {
  start(): void;
  /** Stops taking jobs, lets each running window finish (bounded by `timeoutMs`), gives leases back. */
  stop(timeoutMs?: number): Promise<void>;
  /** One poll now (tests): claims what there is room for. Resolves when the claims are made. */
  pollOnce(): Promise<void>;
  /** Resolves when every job this runner has started has stopped (tests). */
  idle(): Promise<void>;
  running(): number;
}

/** The lease is gone (another runner took the job over) or the gateway is stopping. */
class StopWorking extends Error {}

const MAINTENANCE_EVERY_MS = 10_000;

export function createJobRunner(deps: JobRunnerDeps): JobRunner {
  const { store, fanOut, lister, credits, pricing, notifier, clock, logger, config, instanceId } = deps;
  const sleep =
    deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref()));
  const active = new Map<string, Promise<void>>();
  const metrics = jobMetrics();
  let timer: NodeJS.Timeout | null = null;
  let stopping = false;
  let polling: Promise<void> | null = null;
  let lastMaintenance = 0;
  /** When each running job last reached a step (a round, a window): the heartbeat's bound. */
  const steps = new Map<string, number>();

  async function renew(jobId: string): Promise<JobDoc> {
    if (stopping) throw new StopWorking();
    steps.set(jobId, clock.now());
    const job = await store.renewLease(jobId, instanceId, clock.now(), config.JOB_LEASE_MS);
    if (!job) throw new StopWorking();
    return job;
  }

  const processingRetryAt = (job: JobDoc, error: AppError) =>
    processingRetryTime(job, error, clock.now(), config);

  /** Runs items [from, to) to a result each or into `parked`; returns the window's counts. */
  async function runWindow(
    job: JobDoc,
    items: JobItem[],
    from: number,
    to: number,
    parked: Map<number, number>,
  ) {
    const indexes = Array.from({ length: to - from }, (_, k) => from + k);
    const existing = new Set((await store.resultsBetween(job._id, from, to)).map((r) => r.index));
    const charged = await runItems(job, items, indexes, existing, `w${from}`, parked);
    const inWindow = await store.resultsBetween(job._id, from, to);
    return {
      succeeded: inWindow.filter((r) => r.success).length,
      failed: inWindow.filter((r) => !r.success).length,
      complete: inWindow.length + indexes.filter((i) => parked.has(i)).length === to - from,
      charged,
    };
  }

  /**
   * Runs `indexes` (those without a result in `existing`) to a result each, or parks them in
   * `parked` (a stream still being processed); items that get a result leave `parked`. Resolves
   * with the credits committed. `label` names the rounds' request ids.
   */
  async function runItems(
    job: JobDoc,
    items: JobItem[],
    indexes: readonly number[],
    existing: Set<number>,
    label: string,
    parked: Map<number, number>,
  ): Promise<number> {
    const now = () => clock.now();
    let charged = 0;
    const record = async (
      index: number,
      success: boolean,
      item: Record<string, unknown>,
      credited: number,
    ) => {
      const doc: JobResultDoc = {
        _id: resultId(job._id, index),
        job_id: job._id,
        index,
        success,
        item: { index, ...item },
        charged: credited > 0,
        credits: credited,
        created_at: now(),
      };
      const inserted = await store.insertResult(doc);
      parked.delete(index);
      if (inserted) {
        existing.add(index);
        metrics.items(success ? 'ok' : String(item.error_code ?? 'error'), 1);
      }
      return inserted;
    };
    // Not video URLs: failed at once, free.
    for (const i of indexes) {
      const item = items[i]!;
      if (!existing.has(i) && item.video_id === null) {
        await record(
          i,
          false,
          failureItem(item.url, null, 'INVALID_URL', invalidVideoUrlMessage(item.url)),
          0,
        );
      }
    }
    let attempt = 0;
    let rounds = 0;
    let stalledSince: number | null = null;
    // Parked in an earlier run and due now: asked again here; parked in this run: not before their time.
    const parkedBefore = new Set(parked.keys());
    while (attempt < config.JOB_ITEM_ATTEMPTS) {
      const missing = indexes.filter((i) => !existing.has(i) && (parkedBefore.has(i) || !parked.has(i)));
      if (missing.length === 0) break;
      const current = await renew(job._id);
      // Canceled: what is recorded stays (and is charged); nothing new starts.
      if (current.status === 'canceled') break;
      const requestId = `${job._id}:${label}:r${rounds++}`;
      const charges = await itemCharges(
        missing.map((i) => items[i]!.video_id),
        {
          translate: job.options.translate,
          mode: job.options.mode ?? 'captions',
          capSeconds: job.options.max_audio_seconds ?? 0,
        },
        pricing,
        durationsFrom(deps.extractor, requestId, Math.min(30_000, config.JOB_ITEM_TIMEOUT_MS)),
      );
      const reserved = await reserveUpTo(credits, job, charges.reserved, missing.length, requestId);
      const reservation = reserved.reservation;
      const round = missing.slice(0, reserved.count);
      let successes = 0;
      let committed = 0;
      let outcomes: FanOutOutcome[];
      // What the round may have the model process (each retry takes it again).
      const modelSeconds = modelSecondsUpFront(
        job.options.mode ?? 'captions',
        round.map((_index, k) => charges.audioSeconds[k] ?? 0),
      );
      const tier =
        modelSeconds !== null && deps.modelBudget ? await deps.modelBudget.tierOf(job.account_id) : null;
      /** Seconds taken of the budget and not settled yet (undefined: none). */
      let budgetTaken: number | undefined;
      try {
        if (tier) {
          const refused = await deps
            .modelBudget!.budget.take({ id: job.account_id, tier }, modelSeconds ?? 0)
            .then(
              () => undefined,
              (error: unknown) => {
                if (isAppError(error) && error.code === 'RATE_LIMITED') return error;
                throw error;
              },
            );
          if (!refused) budgetTaken = modelSeconds ?? 0;
          else outcomes = round.map(() => ({ ok: false, error: refused }));
        }
        outcomes ??= await fanOut.run({
          requestId,
          accountId: job.account_id,
          jobs: round.map((i) => ({
            videoId: items[i]!.video_id!,
            language: job.options.language,
            include: job.options.include,
            translate: job.options.translate,
            mode: TRANSCRIPT_MODE[job.options.mode ?? 'captions'],
            ...(job.options.max_audio_seconds === undefined
              ? {}
              : { maxAudioSeconds: job.options.max_audio_seconds }),
          })),
          totalTimeoutMs: config.JOB_ROUND_TIMEOUT_MS,
          itemTimeoutMs: config.JOB_ITEM_TIMEOUT_MS,
        });
        if (budgetTaken !== undefined) {
          const spent = round.reduce(
            (sum, _index, k) => sum + modelSecondsOf(outcomes[k], charges.audioSeconds[k] ?? 0),
            0,
          );
          await deps.modelBudget!.budget.settle(job.account_id, budgetTaken, spent);
          budgetTaken = undefined;
        }
        // A transcript longer than the job's cap (cached for another tier) is not delivered.
        const cap = job.options.max_audio_seconds ?? 0;
        outcomes = outcomes.map((o) => {
          const overCap = o.ok ? overAudioCap(o.transcript, cap, tier ?? undefined) : undefined;
          return overCap ? { ok: false, error: overCap } : o;
        });
        const queueDown = outcomes.every((o) => !o.ok && o.error.code === 'SERVICE_UNAVAILABLE');
        if (queueDown) stalledSince ??= now();
        else stalledSince = null;
        const stallExceeded = stalledSince !== null && now() - stalledSince > config.JOB_STALL_LIMIT_MS;
        // A round where the queue was simply down does not use up an attempt (unless it has been
        // down too long); the last real attempt records whatever failed.
        const finalRound = stallExceeded || (!queueDown && attempt + 1 >= config.JOB_ITEM_ATTEMPTS);
        // The round's results are independent documents: written together, not one round trip
        // after another.
        await Promise.all(
          round.map(async (index, k) => {
            const outcome = outcomes[k]!;
            const item = items[index]!;
            if (outcome.ok) {
              const cost = charges.spent(k, outcome.transcript);
              const body = successItem(item.url, outcome.transcript, {
                format: job.options.format,
                includeTimestamps: job.options.include_timestamps,
                include: job.options.include,
                creditsUsed: cost,
              });
              if (await record(index, true, body, cost)) {
                successes += 1;
                committed += cost;
              }
            } else if (isProcessing(outcome.error) && processingRetryAt(job, outcome.error) !== null) {
              // Not a passing failure: asking again seconds later finds it processing still.
              parkedBefore.delete(index);
              parked.set(index, processingRetryAt(job, outcome.error) ?? now());
            } else if (!outcome.error.retryable || finalRound || isProcessing(outcome.error)) {
              // A stream still processing once the job has waited its limit ends here too.
              const message = publicMessage(outcome.error);
              await record(
                index,
                false,
                failureItem(item.url, item.video_id, outcome.error.code, message),
                0,
              );
            }
          }),
        );
        await reservation.commit(committed, { successfulItems: successes, attemptedItems: round.length });
        charged += committed;
        if (stallExceeded) break;
        if (queueDown) {
          logger.warn(
            { job_id: job._id, items: round.length },
            'extraction queue unavailable; the job waits',
          );
          await sleep(Math.min(10_000, Math.max(500, config.JOBS_POLL_MS)));
          continue;
        }
      } catch (error) {
        await reservation.release().catch(() => {});
        if (budgetTaken !== undefined)
          await deps.modelBudget!.budget.settle(job.account_id, budgetTaken, 0).catch(() => {});
        throw error;
      }
      attempt += 1;
      // Items left for another round failed for a passing reason (a timeout, pacing): give the
      // platform a moment rather than asking again at once.
      const left = indexes.some((i) => !existing.has(i) && (parkedBefore.has(i) || !parked.has(i)));
      if (attempt < config.JOB_ITEM_ATTEMPTS && left) {
        await sleep(backoffDelay({ baseMs: 1_000, maxMs: 10_000 }, attempt));
      }
    }
    // Anything still without a result after every round (the job was canceled mid-window) stays
    // pending; anything that used up its rounds got its failure recorded above.
    return charged;
  }

  const runParked = (job: JobDoc, items: JobItem[], parked: Map<number, number>) =>
    retryParkedItems({ store, clock, config, pricing, instanceId, renew, runItems }, job, items, parked);

  async function loadItems(job: JobDoc): Promise<JobItem[]> {
    const stored = await store.items(job._id);
    if (stored && job.total !== null) return stored;
    const listed = await lister.list(job);
    await store.setItems(job._id, instanceId, listed.items, listed.info, clock.now());
    return listed.items;
  }

  async function finishAndNotify(job: JobDoc, status: 'completed' | 'failed', error: AppError | null) {
    const done = await store.finish(job._id, status, {
      owner: instanceId,
      error: error ? { code: error.code, message: publicMessage(error) } : null,
      nowMs: clock.now(),
      resultsTtlMs: config.JOB_RESULTS_TTL,
    });
    if (done) {
      metrics.finished(done.status);
      await notifier.notify(done);
    }
  }

  /**
   * Renews the lease every third of JOB_LEASE_MS while the job runs. Renewing only between rounds
   * is not enough: a round waits for its slowest item (up to JOB_ROUND_TIMEOUT_MS) and a listing up
   * to JOB_LISTING_TIMEOUT_MS, both longer than the lease, and a lapsed lease lets the next poll
   * (this runner's own too) start the job a second time beside the first. A gateway that dies or
   * freezes stops renewing; a run stuck in one step past any step's bound stops being renewed too,
   * so its job still moves on elsewhere.
   */
  function holdLease(jobId: string): () => void {
    const stepBoundMs =
      Math.max(config.JOB_ROUND_TIMEOUT_MS, config.JOB_LISTING_TIMEOUT_MS) + config.JOB_LEASE_MS;
    let renewing = false;
    steps.set(jobId, clock.now());
    const timer = setInterval(
      () => {
        const now = clock.now();
        if (stopping || renewing || now - (steps.get(jobId) ?? now) > stepBoundMs) return;
        renewing = true;
        store
          .renewLease(jobId, instanceId, now, config.JOB_LEASE_MS)
          .catch((error: unknown) =>
            logger.warn({ job_id: jobId, err: error }, 'renewing a job lease failed'),
          )
          .finally(() => (renewing = false));
      },
      Math.max(50, Math.floor(config.JOB_LEASE_MS / 3)),
    );
    timer.unref();
    return () => {
      clearInterval(timer);
      steps.delete(jobId);
    };
  }

  async function run(claim: { job: JobDoc; resumed: boolean }): Promise<void> {
    const letGo = holdLease(claim.job._id);
    try {
      await work(claim);
    } finally {
      letGo();
    }
  }

  async function work(claim: { job: JobDoc; resumed: boolean }): Promise<void> {
    let job = claim.job;
    const log = { job_id: job._id, account_id: job.account_id };
    try {
      if (!claim.resumed) await notifier.started(job);
      let items: JobItem[];
      try {
        items = await loadItems(job);
      } catch (error) {
        if (error instanceof StopWorking) throw error;
        const appError = isAppError(error) ? error : Errors.internal();
        logger.warn({ ...log, err: error }, 'listing the job source failed');
        await finishAndNotify(job, 'failed', appError);
        return;
      }
      job = await renew(job._id);
      const parked = parkedFromDoc(job);
      let index = job.next_index;
      while (index < items.length) {
        if (job.status === 'canceled') break;
        const to = Math.min(index + config.JOB_WINDOW_SIZE, items.length);
        let window;
        try {
          window = await runWindow(job, items, index, to, parked);
        } catch (error) {
          if (isAppError(error) && error.code === 'INSUFFICIENT_CREDITS') {
            logger.info({ ...log }, 'job stopped: the credits ran out');
            // Whatever this window finished still counts.
            const partial = resultCounts(await store.resultsBetween(job._id, index, to), pricing);
            await store.advance(job._id, instanceId, { from: index, to: index, ...partial }, clock.now());
            await finishAndNotify(job, 'failed', error);
            return;
          }
          throw error;
        }
        if (!window.complete) {
          if ((await store.byId(job._id))?.status === 'canceled') {
            // Canceled mid-window: count what was done, then stop.
            await store.advance(job._id, instanceId, { from: index, to: index, ...window }, clock.now());
            break;
          }
          // Rounds cut short (fewer credits than items): the same window again, for what is left.
          continue;
        }
        // Parked items saved first: a crash before the advance redoes the window, never loses them.
        const nothing = { succeeded: 0, failed: 0, charged: 0 };
        if (!(await store.setParked(job._id, instanceId, parkedDoc(parked), nothing, clock.now()))) {
          throw new StopWorking();
        }
        if (!(await store.advance(job._id, instanceId, { from: index, to, ...window }, clock.now()))) {
          throw new StopWorking();
        }
        index = to;
        job = await renew(job._id);
      }
      if (job.status !== 'canceled' && index >= items.length) {
        try {
          const parkedOutcome = await runParked(job, items, parked);
          if (parkedOutcome === 'lost') throw new StopWorking();
          if (parkedOutcome === 'waiting') return;
        } catch (error) {
          if (!isAppError(error) || error.code !== 'INSUFFICIENT_CREDITS') throw error;
          logger.info({ ...log }, 'job stopped: the credits ran out');
          await finishAndNotify(job, 'failed', error);
          return;
        }
      }
      const current = await store.byId(job._id);
      if (current?.status === 'canceled') {
        // The canceler left the notice to us, so that it carries the final numbers.
        metrics.finished('canceled');
        await store.releaseLease(job._id, instanceId);
        await notifier.notify(current);
        return;
      }
      await finishAndNotify(job, 'completed', null);
    } catch (error) {
      if (error instanceof StopWorking) {
        // Stopping, or another runner holds it now: give it back (a no-op if we no longer hold it).
        await store.releaseLease(job._id, instanceId).catch(() => {});
        return;
      }
      // A store or ledger failure: leave the job for a later try (by any runner) after a pause.
      logger.error({ ...log, err: error }, 'job run failed; it will be resumed');
      await store.releaseLease(job._id, instanceId, clock.now() + config.JOB_LEASE_MS).catch(() => {});
    }
  }

  async function maintenance() {
    const now = clock.now();
    if (now - lastMaintenance < MAINTENANCE_EVERY_MS) return;
    lastMaintenance = now;
    // Jobs that waited too long expire unstarted: nothing was charged; the sweep below hands their
    // event and webhook on like any failure's.
    for (const job of await store.queuedBefore(now - config.JOBS_QUEUED_TTL_MS, 100)) {
      await store.finish(job._id, 'failed', {
        error: {
          code: 'JOB_QUEUE_EXPIRED',
          message: `The job waited ${Math.round(config.JOBS_QUEUED_TTL_MS / 60_000)} minutes without starting and expired; nothing was charged. Create it again.`,
        },
        nowMs: now,
        resultsTtlMs: config.JOB_RESULTS_TTL,
      });
    }
    // Terminal jobs only (the query's filter); notify never throws.
    for (const job of await store.unnotified(now, 20)) await notifier.notify(job);
    await store.purge(now, 100);
  }

  async function poll() {
    if (stopping) return;
    try {
      await maintenance();
      while (!stopping && active.size < config.JOBS_RUNNER_CONCURRENCY) {
        const claim = await store.claimNext(
          instanceId,
          clock.now(),
          config.JOB_LEASE_MS,
          config.JOBS_MAX_RUNNING_PER_ACCOUNT,
        );
        if (!claim) break;
        const id = claim.job._id;
        // Our own run of it is still going (a renewal missed its beat): the claim renewed its lease;
        // a second run beside it would do its window twice.
        if (active.has(id)) continue;
        const done = run(claim).finally(() => {
          active.delete(id);
          metrics.running(active.size);
        });
        active.set(id, done);
        metrics.running(active.size);
      }
    } catch (error) {
      logger.error({ err: error }, 'job poll failed');
    }
  }

  function pollOnce(): Promise<void> {
    polling ??= poll().finally(() => {
      polling = null;
    });
    return polling;
  }

  return {
    start() {
      if (timer || config.JOBS_RUNNER_CONCURRENCY === 0) return;
      timer = setInterval(() => void pollOnce(), config.JOBS_POLL_MS);
      timer.unref();
      void pollOnce();
    },
    async stop(timeoutMs = 10_000) {
      stopping = true;
      if (timer) clearInterval(timer);
      timer = null;
      let bound: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.allSettled([polling, ...active.values()]),
        new Promise<void>((resolve) => {
          bound = setTimeout(resolve, timeoutMs);
          bound.unref();
        }),
      ]);
      clearTimeout(bound);
      // Whatever is still running past the bound: its lease is given back now, so another replica
      // resumes it at once; the window in flight is redone there, never charged twice.
      await Promise.allSettled([...active.keys()].map((id) => store.releaseLease(id, instanceId)));
    },
    pollOnce,
    async idle() {
      while (active.size > 0 || polling) await Promise.allSettled([polling, ...active.values()]);
    },
    running: () => active.size,
  };
}

/** Messages go through the same filter as every error body: internal details never leak. */
function publicMessage(error: AppError): string {
  return toPublicErrorBody(error, '').error.message;
}
