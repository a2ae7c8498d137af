/**
 * What became of the videos a watch handed to its jobs, read from those jobs' results at the start
 * of the next run (no hook between jobs and watches: the job's results are the record). A video
 * whose captions were missing is retried until WATCH_CAPTION_RETRY_HOURS after the run that first
 * found it; a success, a final failure, or a job whose results are gone ends the watch's interest.
 */
import { isAppError } from '@subx/errors';
import type { JobsService } from '../jobs/service.ts';
import { CAPTION_MISSING_CODES } from './model.ts';
import type { WatchPending } from './model.ts';

/** Results read per page, and pages per job at most (a watch's job holds far fewer items). */
const PAGE = 200;
const MAX_PAGES = 20;

export interface Settled {
  /** Captions were missing and the bound has not passed: hand them to this run's job. */
  retry: WatchPending[];
  /**
   * Their job has not reached them yet (or could not be read now): look again next run. Past the
   * bound they are let go too: they could not be retried any more, whatever their outcome.
   */
  following: WatchPending[];
  /** Captions still missing when the bound passed. */
  givenUp: number;
}

interface Outcome {
  success: boolean;
  code: string | null;
}

/** A job's outcomes by video id; `done` when the job has ended (an unlisted video will not come). */
async function outcomesOf(
  jobs: Pick<JobsService, 'results'>,
  accountId: string,
  jobId: string,
): Promise<{ done: boolean; byVideo: Map<string, Outcome> } | null> {
  const byVideo = new Map<string, Outcome>();
  let cursor: string | undefined;
  let status = 'running';
  try {
    for (let page = 0; page < MAX_PAGES; page++) {
      const found = await jobs.results(accountId, jobId, {
        limit: PAGE,
        ...(cursor ? { cursor } : {}),
      });
      status = found.status;
      for (const item of found.results) {
        if (typeof item.video_id !== 'string') continue;
        const code = typeof item.error_code === 'string' ? item.error_code : null;
        byVideo.set(item.video_id, { success: item.success === true, code });
      }
      if (found.next_cursor === null || found.results.length === 0) break;
      cursor = found.next_cursor;
    }
  } catch (err) {
    // Deleted, or its results expired (JOB_RESULTS_TTL): what became of its videos is not known.
    if (isAppError(err) && (err.code === 'NOT_FOUND' || err.code === 'JOB_EXPIRED')) return null;
    throw err;
  }
  return { done: ['completed', 'failed', 'canceled'].includes(status), byVideo };
}

export async function settlePending(deps: {
  jobs: Pick<JobsService, 'results'>;
  accountId: string;
  pending: readonly WatchPending[];
  nowMs: number;
  retryMs: number;
  onReadError(err: unknown, jobId: string): void;
}): Promise<Settled> {
  const settled: Settled = { retry: [], following: [], givenUp: 0 };
  const withinBound = (p: WatchPending) => deps.nowMs - p.first_seen < deps.retryMs;
  const byJob = new Map<string, WatchPending[]>();
  for (const p of deps.pending) {
    if (p.job_id === null) {
      // A run that could not start its job left it waiting.
      if (withinBound(p)) settled.retry.push(p);
      else settled.givenUp++;
      continue;
    }
    byJob.set(p.job_id, [...(byJob.get(p.job_id) ?? []), p]);
  }
  for (const [jobId, entries] of byJob) {
    let outcomes: Awaited<ReturnType<typeof outcomesOf>>;
    try {
      outcomes = await outcomesOf(deps.jobs, deps.accountId, jobId);
    } catch (err) {
      deps.onReadError(err, jobId);
      settled.following.push(...entries.filter(withinBound));
      continue;
    }
    if (!outcomes) continue;
    for (const p of entries) {
      const outcome = outcomes.byVideo.get(p.video_id);
      if (!outcome) {
        // Not reached yet; a job that ended without it (canceled) will not reach it.
        if (!outcomes.done && withinBound(p)) settled.following.push(p);
        continue;
      }
      if (outcome.success || !CAPTION_MISSING_CODES.includes(outcome.code ?? '')) continue;
      if (withinBound(p)) settled.retry.push(p);
      else settled.givenUp++;
    }
  }
  return settled;
}
