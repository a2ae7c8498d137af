/**
 * What a watch is, as stored and as shown. Pure: no I/O here.
 *
 * A watch is one document (`watches`): its source, its schedule, the batch options of the jobs it
 * starts, and the set of videos it has already seen (newest first, capped), which is what makes a
 * run find only what is new. A run is leased (`lease_owner`, `lease_until`) like a job, so one
 * watch runs at most once at a time across gateway replicas, and a replica that dies mid-run
 * leaves a lease that lapses and is taken over at the next poll.
 */
import { randomBytes } from 'node:crypto';
import type { SearchDuration, SearchFeature, SearchSort, UploadDate } from '@subx/youtube';
import type { JobOptions } from '../jobs/model.ts';
import type { ChannelTabName } from '@subx/public-api';

export type WatchSource =
  | { type: 'channel'; url: string; tab: ChannelTabName }
  | { type: 'playlist'; url: string }
  | {
      type: 'search';
      query: string;
      upload_date?: UploadDate;
      duration?: SearchDuration;
      sort?: SearchSort;
      features?: SearchFeature[];
    };

export interface WatchRun {
  at: number;
  /** The run's number, 1 for the first. */
  run: number;
  new_videos: number;
  /** Videos of earlier runs whose captions were missing, handed to this run's job again. */
  retried_videos?: number;
  job_id: string | null;
  /** The source could not be listed, or the job could not be started (the videos stay new). */
  error: { code: string; message: string } | null;
}

/**
 * A video handed to a job whose outcome the watch has not settled yet: in flight (`job_id` set), or
 * waiting to be retried because its captions were missing (`job_id` null after a failed run).
 */
export interface WatchPending {
  video_id: string;
  /** When a run first handed it to a job: retries stop WATCH_CAPTION_RETRY_HOURS after this. */
  first_seen: number;
  job_id: string | null;
}

/** The first `count` ids of `seen` not described by an earlier mark were first seen at `at` (history.ts). */
export interface SeenMark {
  at: number;
  count: number;
}

/** Why a watch stopped running until its owner resumes it. */
export interface WatchPause {
  at: number;
  /** `key_compromised`: the key that created it was revoked after a password reset or by an operator. */
  reason: 'key_compromised';
}

export type WatchDoc = {
  _id: string;
  account_id: string;
  source: WatchSource;
  interval_minutes: number;
  backfill: boolean;
  webhook_url: string | null;
  options: JobOptions;
  created_at: number;
  updated_at: number;
  next_run_at: number;
  runs: number;
  last_run: WatchRun | null;
  /** Video ids already seen (handed to a job, or recorded by a first run without backfill), newest first. */
  seen: string[];
  /** When the ids of `seen` were first seen (history.ts); absent on older watches. */
  seen_marks?: SeenMark[];
  /** Videos whose job outcome is still to be read, newest first (absent on older watches). */
  pending?: WatchPending[];
  /**
   * The account's `watch_history_days` (services/jobs/src/retention): what the watch saw or follows
   * is forgotten that long after it was found. Absent: kept as long as the watch.
   */
  history_days?: number;
  /** When the retention sweep next trims its history (set exactly when `history_days` is). */
  history_check_at?: number;
  lease_owner: string | null;
  lease_until: number;
  request_id: string;
  /** The API key that created it (accounts.ts keyIdOf); absent when the admin token did. */
  key_id?: string;
  /** Set: the scheduler leaves it alone until its owner resumes it (absent on older watches). */
  paused?: WatchPause | null;
};

/** Seen ids kept per watch: far more than one listing holds, so an old video never comes back as new. */
export const WATCH_SEEN_MAX = 5_000;
/** Videos a watch follows until their job's outcome is read (the oldest are let go beyond it). */
export const WATCH_PENDING_MAX = 1_000;
/**
 * Item failures that mean "no captions yet": the platform often adds auto-generated captions hours
 * after upload, and a stream's only once it has ended and been processed (VIDEO_PROCESSING), so these
 * are retried; every other failure (VIDEO_UNAVAILABLE, …) is final.
 */
export const CAPTION_MISSING_CODES: readonly string[] = [
  'NO_SUBTITLES',
  'LANGUAGE_NOT_AVAILABLE',
  'VIDEO_PROCESSING',
];

/** `wat_` + the creation time (base 36, fixed width) + 64 random bits: ids sort by creation. */
export function newWatchId(nowMs: number): string {
  return `wat_${nowMs.toString(36).padStart(9, '0')}${randomBytes(8).toString('hex')}`;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The public watch object. */
export function watchView(w: WatchDoc) {
  return {
    watch_id: w._id,
    source: w.source,
    interval_minutes: w.interval_minutes,
    backfill: w.backfill,
    webhook_url: w.webhook_url,
    language: w.options.language,
    format: w.options.format,
    include_timestamps: w.options.include_timestamps,
    include: w.options.include,
    translate: w.options.translate,
    mode: w.options.mode ?? 'captions',
    created_at: iso(w.created_at),
    next_run_at: iso(w.next_run_at),
    runs: w.runs,
    paused: w.paused ? { at: iso(w.paused.at), reason: w.paused.reason } : null,
    seen_videos: w.seen.length,
    pending_videos: (w.pending ?? []).length,
    last_run: w.last_run
      ? {
          run: w.last_run.run,
          at: iso(w.last_run.at),
          new_videos: w.last_run.new_videos,
          retried_videos: w.last_run.retried_videos ?? 0,
          job_id: w.last_run.job_id,
          error: w.last_run.error,
        }
      : null,
  };
}

export type WatchView = ReturnType<typeof watchView>;
