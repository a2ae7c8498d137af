/**
 * What a bulk job is, as stored and as shown. Pure: no I/O here.
 *
 * A job is one document (`jobs`); its list of videos is a second document (`job_items`, written
 * once when the source is known, read by the runner only, so polling a job never loads 10,000
 * URLs); each finished video is a document of its own (`job_results`, id `<job>:<index>`), which is
 * what makes resuming safe: a result that exists is never run or charged again.
 */
import type { ChunkingOptions, OutputFormat } from '@subx/formats';
import type { MetadataField, SearchDuration, SearchFeature, SearchSort, UploadDate } from '@subx/youtube';
import type { TranscriptModeName } from '@subx/public-api';
import type { ChannelTabName, JobStatus } from '@subx/public-api';

/** A job's `include`: metadata fields, and `words` (each segment's timed words). */
type IncludeField = MetadataField | 'words';

export const TERMINAL_STATUSES: readonly JobStatus[] = ['completed', 'failed', 'canceled'];

/** The source as the client sent it (and as the job shows it). */
export type JobSource =
  | { type: 'urls'; urls: string[] }
  | { type: 'playlist'; url: string; max: number }
  | { type: 'channel'; url: string; tab: ChannelTabName; max: number }
  | {
      type: 'search';
      query: string;
      search_type: 'video';
      max: number;
      upload_date?: UploadDate;
      duration?: SearchDuration;
      sort?: SearchSort;
      features?: SearchFeature[];
    };

export interface JobOptions {
  language: string;
  format: OutputFormat;
  include_timestamps: boolean;
  include: IncludeField[];
  translate: boolean;
  /** Where transcripts may come from (absent on jobs stored before it existed: captions). */
  mode?: TranscriptModeName;
  /**
   * The longest audio an item may have transcribed: the account's tier cap when the job was made
   * (absent on jobs stored before it existed: the extractor's ceiling).
   */
  max_audio_seconds?: number;
  /** json jobs with timestamps: results carry chunks, and `…/chunks` downloads them as NDJSON. */
  chunking?: ChunkingOptions;
}

export interface JobError {
  code: string;
  message: string;
}

export type JobDoc = {
  _id: string;
  account_id: string;
  status: JobStatus;
  /** The source as shown; a `urls` source is shown by count only (the list is in job_items). */
  source: JobSource | { type: 'urls'; count: number };
  /** Playlist and channel sources: what the listing found (title), once listed. */
  source_info: { title: string; id: string } | null;
  options: JobOptions;
  webhook_url: string | null;
  /** null until a playlist or channel has been listed. */
  total: number | null;
  /** Every item below this index has a result; the runner resumes here. */
  next_index: number;
  succeeded: number;
  failed: number;
  credits_charged: number;
  error: JobError | null;
  /** Times are epoch milliseconds, as everywhere in the document store. */
  created_at: number;
  updated_at: number;
  started_at: number | null;
  finished_at: number | null;
  /**
   * Results are kept until then (the account's `job_results_days` after finishing, else
   * JOB_RESULTS_TTL); the job a while longer.
   */
  expires_at: number | null;
  /** The job document itself is removed then (404 afterwards). */
  purge_at: number | null;
  /** Its results and items were removed at `expires_at` (the results answer 410 since). */
  results_purged: boolean;
  /**
   * Its chunks (`…/chunks`, the `chunks` of its results) are served until then: the account's
   * `chunks_days` after it ended, never past `expires_at`. Absent on jobs stored before it existed
   * (their chunks end with their results).
   */
  chunks_expire_at?: number | null;
  /** The retention sweep closed its chunks at `chunks_expire_at` (services/jobs/src/retention). */
  chunks_purged?: boolean;
  /** Which gateway runs it, until when (renewed as it goes; a crashed runner's lease runs out). */
  lease_owner: string | null;
  lease_until: number;
  /** Terminal and its lifecycle event and webhook handed on; false: the sweeper retries that. */
  notified: boolean;
  request_id: string;
  /** The API key that created it (accounts.ts keyIdOf); absent when the admin token did. */
  key_id?: string;
  /**
   * Its place in its account's queue when it was created (the account's open jobs then): claims
   * go by this, then by age, so each account's first job comes before anyone's second. Absent on
   * jobs stored before it existed (those sort first).
   */
  queue_rank?: number;
  /**
   * Items whose stream was still being processed (VIDEO_PROCESSING): index → when to ask again
   * (epoch ms). They have no result yet and are not counted; the job ends once none is left.
   */
  parked?: Record<string, number>;
  /**
   * Credit reservations of items in flight, by id: set before a refill's first item can be
   * recorded, unset once its commit is done. What a runner that died left here is settled by the
   * next one (leftovers.ts), so an item recorded as delivered is charged once, never zero times.
   */
  open_reservations?: Record<string, true>;
};

export interface JobItem {
  url: string;
  /** null: not an accepted video URL (the item fails with INVALID_URL, free). */
  video_id: string | null;
}

export type JobItemsDoc = {
  _id: string;
  items: JobItem[];
};

export type JobResultDoc = {
  _id: string;
  job_id: string;
  index: number;
  success: boolean;
  /** The batch item shape (docs/api.md 2.4). */
  item: Record<string, unknown>;
  /** Whether this result's credit was committed by the round that recorded it. */
  charged: boolean;
  /** The credits committed for it (absent on results stored before it existed: 1 if charged). */
  credits?: number;
  /** The reservation it was run under (its refill's); absent for free items and older results. */
  reservation_id?: string;
  created_at: number;
};

export const resultId = (jobId: string, index: number) => `${jobId}:${String(index).padStart(6, '0')}`;

export function isTerminal(status: JobStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/** Opaque cursors: base64url JSON, checked on the way back in (a bad cursor is INVALID_REQUEST). */
export function encodeCursor(value: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

export function decodeCursor(cursor: string): Record<string, unknown> | null {
  if (cursor.length > 512) return null;
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export interface JobView {
  job_id: string;
  status: JobStatus;
  source: JobDoc['source'] & { title?: string };
  language: string;
  format: OutputFormat;
  include_timestamps: boolean;
  include: IncludeField[];
  mode: TranscriptModeName;
  progress: { total: number | null; succeeded: number; failed: number; pending: number | null };
  credits_charged: number;
  error: JobError | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
  expires_at: string | null;
  results_url: string;
}

/** The public job object (without the webhook state, which the route adds). */
export function jobView(job: JobDoc): JobView {
  const done = job.succeeded + job.failed;
  return {
    job_id: job._id,
    status: job.status,
    source: job.source_info ? { ...job.source, title: job.source_info.title } : job.source,
    language: job.options.language,
    format: job.options.format,
    include_timestamps: job.options.include_timestamps,
    include: job.options.include,
    mode: job.options.mode ?? 'captions',
    ...(job.options.chunking
      ? {
          chunking: {
            max_tokens: job.options.chunking.maxTokens,
            overlap_tokens: job.options.chunking.overlapTokens,
            split: job.options.chunking.split,
          },
        }
      : {}),
    progress: {
      total: job.total,
      succeeded: job.succeeded,
      failed: job.failed,
      // Items not done; for a canceled job, the items that were dropped.
      pending: job.total === null ? null : Math.max(0, job.total - done),
    },
    credits_charged: job.credits_charged,
    error: job.error,
    created_at: new Date(job.created_at).toISOString(),
    updated_at: new Date(job.updated_at).toISOString(),
    started_at: iso(job.started_at),
    finished_at: iso(job.finished_at),
    expires_at: iso(job.expires_at),
    results_url: `/api/v1/jobs/${job._id}/results`,
  };
}
