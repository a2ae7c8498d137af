/**
 * The job runner: every job-service replica runs one. It leases the oldest runnable job (queued, or running
 * under a lapsed lease), lists its playlist or channel if it has one, and runs its items through a
 * pool that keeps up to JOB_WINDOW_SIZE of them at the bulk fan-out, refilled as each finishes
 * (item-pool.ts), saving progress as the finished prefix moves (progress.ts):
 *
 * - An item that already has a result (recorded by a run that crashed or lost its lease) is
 *   neither run nor charged again; the others get up to JOB_ITEM_ATTEMPTS tries. Each refill
 *   reserves the most its items may cost first (item-group.ts, item-charges.ts: with `mode`, from
 *   each video's duration; the balance never goes below zero), records the results, then commits
 *   what was delivered only: failures are free, as in batch.
 * - A result is recorded before its credit is committed, under a reservation noted on the job
 *   first: a crash in between leaves the reservation noted, and the runner that resumes the job
 *   settles it for what was recorded (leftovers.ts), so an item is charged once, never twice and
 *   never not at all.
 * - The extraction queue unreachable (503) does not use up tries: the job waits, holding its
 *   lease, up to JOB_STALL_LIMIT_MS.
 * - DELETE marks the job canceled at once; the runner starts nothing more after it, keeping (and
 *   charging) what was in flight.
 * - Not even one more item paid for, with nothing in flight: the job ends failed,
 *   INSUFFICIENT_CREDITS, keeping what it finished.
 * - An item whose stream is still live or being processed is parked, not failed (parked.ts): while
 *   only parked items are left, the job gives its lease back until the first is due.
 * - The terminal transition happens once (a conditional update); its maker hands the lifecycle
 *   event and webhook on, and a sweeper retries that for a terminal job not marked `notified`.
 */
import { Errors, isAppError, toPublicErrorBody, type AppError } from '@subx/errors';
import type { Clock, Logger } from '@subx/ports';
import type { AccessPricing } from '@subx/credits';
import type { CreditLedger, Tier } from '@subx/credits';
import type { ExtractorBackend } from '@subx/backends';
import type { FanOut } from '@subx/fanout';
import type { ModelBudget } from '@subx/credits';
import type { JobSourceLister } from './sources.ts';
import type { JobDoc, JobItem } from './model.ts';
import type { JobStore } from './store.ts';
import type { JobNotifier } from './notify.ts';
import { jobMetrics } from './metrics.ts';
import { finishTtls, fixedTtls, type JobTtlsOf } from './ttls.ts';
import { runItemPool } from './item-pool.ts';
import { createJobProgress, type ProgressCounts } from './progress.ts';
import { settleLeftovers } from './leftovers.ts';

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
  /** Backoffs between tries and pauses while the queue is down (tests shorten them). Default real timers. */
  sleep?: (ms: number) => Promise<void>;
  /**
   * The accounts' daily model budget, and each account's tier for it: a refill of items that may
   * need audio transcribed takes their length first, retries included (access/model-budget.ts).
   * Absent (tests of other concerns): no budget is kept.
   */
  modelBudget?: { budget: ModelBudget; tierOf(accountId: string): Promise<Tier | null> };
  /**
   * Items of one job at the fan-out at once; default JOB_WINDOW_SIZE. The direct fan-out has no
   * queue in front of the extractor, so start-jobs.ts caps it there at the fan-out's concurrency.
   */
  maxInFlight?: number;
  /** The account's retention when a job ends (services/jobs/src/retention); absent: JOB_RESULTS_TTL. */
  ttlsOf?: JobTtlsOf;
}

export interface JobRunner {
  start(): void;
  /** Stops taking jobs, lets the items in flight finish (bounded by `timeoutMs`), gives leases back. */
  stop(timeoutMs?: number): Promise<void>;
  /** One poll now (tests): claims what there is room for. Resolves when the claims are made. */
  pollOnce(): Promise<void>;
  /** Resolves when every job this runner has started has stopped (tests). */
  idle(): Promise<void>;
  running(): number;
}

const MAINTENANCE_EVERY_MS = 10_000;

export function createJobRunner(deps: JobRunnerDeps): JobRunner {
  const { store, fanOut, lister, credits, pricing, notifier, clock, logger, config, instanceId } = deps;
  const ttlsOf = deps.ttlsOf ?? fixedTtls(config.JOB_RESULTS_TTL);
  const sleep =
    deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref()));
  const active = new Map<string, Promise<void>>();
  const metrics = jobMetrics();
  let timer: NodeJS.Timeout | null = null;
  let stopping = false;
  let polling: Promise<void> | null = null;
  let lastMaintenance = 0;
  /** When each running job last moved (a refill, an item done): the heartbeat's bound. */
  const steps = new Map<string, number>();

  /**
   * The job as it is now, its lease renewed; null when the run is to stop: the service is stopping,
   * or the lease is gone (another runner took the job over).
   */
  async function renew(jobId: string): Promise<JobDoc | null> {
    if (stopping) return null;
    steps.set(jobId, clock.now());
    return store.renewLease(jobId, instanceId, clock.now(), config.JOB_LEASE_MS);
  }

  /** A run that stops gives its job back (a no-op if another runner holds it now). */
  async function giveBack(jobId: string): Promise<void> {
    await store.releaseLease(jobId, instanceId).catch(() => {});
  }

  async function loadItems(job: JobDoc): Promise<JobItem[]> {
    const stored = await store.items(job._id);
    if (stored && job.total !== null) return stored;
    const listed = await lister.list(job);
    await store.setItems(job._id, instanceId, listed.items, listed.info, clock.now());
    return listed.items;
  }

  async function finishAndNotify(
    job: JobDoc,
    status: 'completed' | 'failed',
    error: AppError | null,
    counts?: ProgressCounts,
  ) {
    const done = await store.finish(job._id, status, {
      owner: instanceId,
      error: error ? { code: error.code, message: publicMessage(error) } : null,
      nowMs: clock.now(),
      ...finishTtls(await ttlsOf(job.account_id)),
      ...(counts ? { counts } : {}),
    });
    if (done) {
      metrics.finished(done.status);
      await notifier.notify(done);
    }
  }

  /**
   * Renews the lease every third of JOB_LEASE_MS while the job runs. Renewing only at refills is
   * not enough: the items in flight may all be slow (each up to JOB_ROUND_TIMEOUT_MS) and a listing
   * takes up to JOB_LISTING_TIMEOUT_MS, both longer than the lease, and a lapsed lease lets the next
   * poll (this runner's own too) start the job a second time beside the first. A gateway that dies
   * or freezes stops renewing; a run that has not moved for longer than any step's bound stops
   * being renewed too, so its job still moves on elsewhere.
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
        const appError = isAppError(error) ? error : Errors.internal();
        logger.warn({ ...log, err: error }, 'listing the job source failed');
        await finishAndNotify(job, 'failed', appError);
        return;
      }
      const renewed = await renew(job._id);
      if (!renewed) return await giveBack(job._id);
      job = renewed;
      // A runner that died here before left reservations of items in flight: settled first.
      await settleLeftovers({ store, credits, logger, owner: instanceId }, job);
      const progress = createJobProgress({
        store,
        clock,
        instanceId,
        job,
        total: items.length,
        saveEveryItems: config.JOB_WINDOW_SIZE,
      });
      const end = await runItemPool(
        {
          store,
          clock,
          logger,
          config,
          fanOut,
          extractor: deps.extractor,
          credits,
          pricing,
          ...(deps.modelBudget ? { modelBudget: deps.modelBudget } : {}),
          maxInFlight: deps.maxInFlight ?? config.JOB_WINDOW_SIZE,
          owner: instanceId,
          sleep,
          renew,
          // A backoff that ends after the run did is no step of it.
          touch: () => void (steps.has(job._id) && steps.set(job._id, clock.now())),
          metrics,
        },
        job,
        items,
        progress,
      );
      if (end.kind === 'stopped') {
        // A stopping gateway still holds the lease: what it finished is saved for whoever resumes.
        await progress.save().catch(() => false);
        return await giveBack(job._id);
      }
      if (end.kind === 'out-of-credits') {
        logger.info({ ...log }, 'job stopped: the credits ran out');
        // Whatever it finished still counts, in the update that ends it.
        await finishAndNotify(job, 'failed', end.error, progress.uncounted());
        return;
      }
      const saved = end.kind === 'canceled' ? await progress.saveAll() : await progress.save();
      if (!saved) return await giveBack(job._id);
      const current = await store.byId(job._id);
      if (current?.status === 'canceled') {
        // The canceler left the notice to us, so that it carries the final numbers.
        metrics.finished('canceled');
        await store.releaseLease(job._id, instanceId);
        await notifier.notify(current);
        return;
      }
      if (progress.parked.size > 0) {
        // Only parked items are left: no runner waits for them; the job is free again when one is due.
        await store.releaseLease(job._id, instanceId, Math.min(...progress.parked.values()));
        return;
      }
      await finishAndNotify(job, 'completed', null);
    } catch (error) {
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
        ...finishTtls(await ttlsOf(job.account_id)),
      });
    }
    // Terminal jobs only (the query's filter); notify never throws. Expired results are deleted
    // by the retention sweep (services/jobs/src/retention), which counts what it deletes.
    for (const job of await store.unnotified(now, 20)) await notifier.notify(job);
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
        // a second run beside it would run its items in flight twice.
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
      // resumes it at once; items in flight without a result are run there, none charged twice.
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
