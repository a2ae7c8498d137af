/**
 * Names and bounds of jobs and watches that the public API shows and the job service keeps: the
 * statuses, the channel tabs, the id patterns the routes check, the watch intervals.
 */
export const JOB_STATUSES = ['queued', 'running', 'completed', 'failed', 'canceled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const CHANNEL_TABS = ['videos', 'shorts', 'streams'] as const;
export type ChannelTabName = (typeof CHANNEL_TABS)[number];

export const JOB_ID_PATTERN = '^job_[0-9a-z]{9}[0-9a-f]{16}$';
export const WATCH_ID_PATTERN = '^wat_[0-9a-z]{9}[0-9a-f]{16}$';

/** The shortest interval between scheduled runs. */
export const WATCH_MIN_INTERVAL_MINUTES = 15;
/** The longest: a week. */
export const WATCH_MAX_INTERVAL_MINUTES = 10_080;
