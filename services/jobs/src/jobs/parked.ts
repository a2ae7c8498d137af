/**
 * Job items whose stream is still live or being processed (VIDEO_PROCESSING). Asking again in the
 * next round, seconds later, finds the same answer, so such an item is parked on the job instead
 * (`JobDoc.parked`: index → when to ask again) and asked after the platform's Retry-After, capped
 * by JOB_PROCESSING_RETRY_MAX_SECONDS, until JOB_PROCESSING_WAIT_MS after the job started; then it
 * ends with VIDEO_PROCESSING like any final failure.
 */
import type { AppError } from '@subx/errors';
import type { Clock } from '@subx/ports';
import { itemsPrice } from '@subx/credits';
import type { AccessPricing } from '@subx/credits';
import type { JobDoc, JobItem, JobResultDoc } from './model.ts';
import type { JobStore } from './store.ts';

interface ParkingConfig {
  JOB_PROCESSING_WAIT_MS: number;
  JOB_PROCESSING_RETRY_MAX_SECONDS: number;
  JOB_WINDOW_SIZE: number;
}

/** What stored results add to a job's counts: items succeeded and failed, credits committed. */
export function resultCounts(results: readonly JobResultDoc[], pricing: AccessPricing) {
  return {
    succeeded: results.filter((r) => r.success).length,
    failed: results.filter((r) => !r.success).length,
    // Results stored before `credits` existed: the item price if charged.
    charged: results.reduce((sum, r) => sum + (r.credits ?? (r.charged ? itemsPrice(1, pricing) : 0)), 0),
  };
}

/** A stream still live or being processed: asked again after its Retry-After, not in the next round. */
export function isProcessing(error: AppError): boolean {
  return error.code === 'VIDEO_PROCESSING';
}

/** When to ask again for an item still being processed; null: the job has waited long enough. */
export function processingRetryTime(
  job: JobDoc,
  error: AppError,
  nowMs: number,
  config: ParkingConfig,
): number | null {
  const until = (job.started_at ?? nowMs) + config.JOB_PROCESSING_WAIT_MS;
  if (nowMs >= until) return null;
  const waitSeconds = Math.min(
    error.retryAfterSeconds ?? config.JOB_PROCESSING_RETRY_MAX_SECONDS,
    config.JOB_PROCESSING_RETRY_MAX_SECONDS,
  );
  return Math.min(nowMs + Math.max(1, waitSeconds) * 1000, until);
}

/** The parked items as the job document keeps them (JobDoc.parked). */
export function parkedDoc(parked: ReadonlyMap<number, number>): Record<string, number> {
  return Object.fromEntries([...parked].map(([index, at]) => [String(index), at]));
}

export function parkedFromDoc(job: JobDoc): Map<number, number> {
  return new Map(Object.entries(job.parked ?? {}).map(([index, at]) => [Number(index), at]));
}

export interface ParkedRetryDeps {
  store: JobStore;
  clock: Clock;
  config: ParkingConfig;
  pricing: AccessPricing;
  instanceId: string;
  /** The runner's lease renewal: the job as it is now (throws when the lease is gone). */
  renew(jobId: string): Promise<JobDoc>;
  /** The runner's rounds over `indexes`: each to a result, or parked again. */
  runItems(
    job: JobDoc,
    items: JobItem[],
    indexes: readonly number[],
    existing: Set<number>,
    label: string,
    parked: Map<number, number>,
  ): Promise<number>;
}

/**
 * Asks again for the parked items that are due, a window's worth at a time, and saves what is left
 * parked together with the counts of those that got a result, in one update (a crash neither loses
 * a parked item nor counts one twice). Resolves `waiting` when items stay parked (the lease has been
 * handed back until the first is due, so no runner waits for it), `done` when none is left,
 * `canceled`, or `lost` when the lease is no longer this runner's. Out of credits, it saves what got
 * a result, then rethrows.
 */
export async function retryParkedItems(
  deps: ParkedRetryDeps,
  job: JobDoc,
  items: JobItem[],
  parked: Map<number, number>,
): Promise<'waiting' | 'done' | 'canceled' | 'lost'> {
  const { store, clock, config, pricing, instanceId } = deps;
  while (parked.size > 0) {
    const current = await deps.renew(job._id);
    if (current.status === 'canceled') return 'canceled';
    const due = [...parked]
      .filter(([, at]) => at <= clock.now())
      .map(([index]) => index)
      .sort((a, b) => a - b)
      .slice(0, config.JOB_WINDOW_SIZE);
    if (due.length === 0) {
      await store.releaseLease(job._id, instanceId, Math.min(...parked.values()));
      return 'waiting';
    }
    const before = await Promise.all(due.map((i) => store.result(job._id, i)));
    const existing = new Set(due.filter((_, k) => before[k] !== null));
    const failure = await deps.runItems(job, items, due, existing, `p${due[0]}`, parked).then(
      () => null,
      (error: unknown) => ({ error }),
    );
    // Results recorded by a run that crashed before saving count here too: they left no count.
    const done = (await Promise.all(due.map((i) => store.result(job._id, i)))).filter(
      (r): r is JobResultDoc => r !== null,
    );
    for (const r of done) parked.delete(r.index);
    const counts = resultCounts(done, pricing);
    if (!(await store.setParked(job._id, instanceId, parkedDoc(parked), counts, clock.now()))) {
      return 'lost';
    }
    if (failure) throw failure.error;
  }
  return 'done';
}
