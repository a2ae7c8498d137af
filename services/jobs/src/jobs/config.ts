/**
 * The bulk jobs' variables, a fragment of the job service's ConfigSchema (src/config.ts). Item ceilings
 * per tier live in the pricing table (ACCESS_PRICING_JSON `jobMaxItems`), with every other limit
 * that differs by tier.
 */
import { CONSUMER_GROUPS, TOPICS } from '@subx/contracts';
import { durationMs, intBetween, nameString } from '@subx/service-kit';

export const jobsEnv = {
  /** Jobs of one account running at once; the rest wait, queued (accounts take turns). */
  JOBS_MAX_RUNNING_PER_ACCOUNT: intBetween(1, 100).default(2),
  /** Jobs this gateway runs at once (0: it takes jobs but leaves running them to other replicas). */
  JOBS_RUNNER_CONCURRENCY: intBetween(0, 64).default(4),
  /**
   * Items of one job at the extraction workers at once (the runner's pool, refilled as each item
   * finishes; with the direct fan-out at most FANOUT_CONCURRENCY). Progress is saved at least
   * every this many finished items, and every second while it moves.
   */
  JOB_WINDOW_SIZE: intBetween(1, 500).default(50),
  /** One video's budget, from when a worker starts it. */
  JOB_ITEM_TIMEOUT_MS: durationMs.default(60_000),
  /**
   * One item's trip through the fan-out, its wait in the queue included (the credit reservation of
   * the items started with it lives that long, and a reservation older than 3 minutes is released
   * by the ledger's sweeper, so keep it well inside).
   */
  JOB_ROUND_TIMEOUT_MS: durationMs.default(120_000),
  /** Tries an item gets when it fails for a reason worth retrying (timeouts, pacing). */
  JOB_ITEM_ATTEMPTS: intBetween(1, 10).default(3),
  /**
   * How long after a job starts it keeps asking again for items whose stream is still live or being
   * processed (VIDEO_PROCESSING); past it such an item ends with that error.
   */
  JOB_PROCESSING_WAIT_MS: durationMs.default(6 * 3_600_000),
  /** The longest a parked item waits before it is asked again (the platform's Retry-After, capped). */
  JOB_PROCESSING_RETRY_MAX_SECONDS: intBetween(1, 3_600).default(900),
  /** How long the extraction queue may be unreachable before a job's waiting items fail. */
  JOB_STALL_LIMIT_MS: durationMs.default(30 * 60_000),
  /** A runner's hold on a job, renewed every third of it; a crashed gateway's jobs resume after it. */
  JOB_LEASE_MS: durationMs.default(30_000),
  /**
   * A job still queued this long after its creation expires unstarted: it ends `failed` with
   * error JOB_QUEUE_EXPIRED, nothing charged (its event and webhook as for any failure).
   */
  JOBS_QUEUED_TTL_MS: durationMs.default(24 * 3_600_000),
  /** How often a gateway looks for jobs to run. */
  JOBS_POLL_MS: durationMs.default(1_000),
  /** Results are kept this long after a job finishes (then 410 JOB_EXPIRED; the job, as long again). */
  JOB_RESULTS_TTL: durationMs.default(7 * 86_400_000),
  /** Listing a playlist or channel for a job (every continuation, up to 10,000 videos). */
  JOB_LISTING_TIMEOUT_MS: durationMs.default(180_000),
  /** The bulk topic and its workers' group (the extractor reads the same variables, docs/events.md). */
  EXTRACT_BULK_JOBS_TOPIC: nameString.default(TOPICS.extractBulkJobs.default),
  EXTRACT_BULK_WORKERS_GROUP: nameString.default(CONSUMER_GROUPS.extractBulkWorkers.default),
  /** Job lifecycle events (docs/events.md). */
  JOB_EVENTS_TOPIC: nameString.default(TOPICS.jobEvents.default),
};
