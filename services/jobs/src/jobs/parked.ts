/**
 * Job items whose stream is still live or being processed (VIDEO_PROCESSING). Asking again
 * seconds later finds the same answer, so such an item is parked on the job instead
 * (`JobDoc.parked`: index → when to ask again) and asked after the platform's Retry-After, capped
 * by JOB_PROCESSING_RETRY_MAX_SECONDS, until JOB_PROCESSING_WAIT_MS after the job started; then it
 * ends with VIDEO_PROCESSING like any final failure. The item pool (item-pool.ts) takes a parked
 * item back in once it is due; progress.ts saves the list with the job's progress.
 */
import type { AppError } from '@subx/errors';
import type { JobDoc } from './model.ts';

interface ParkingConfig {
  JOB_PROCESSING_WAIT_MS: number;
  JOB_PROCESSING_RETRY_MAX_SECONDS: number;
}

/** A stream still live or being processed: asked again after its Retry-After, not at once. */
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
