/**
 * What a runner that died mid-job left: the credit reservations of its refills in flight, noted on
 * the job (`open_reservations`) before any of their items could be recorded. The runner that
 * resumes the job settles each one for the credits of the results recorded under it
 * (`CreditLedger.settleLeftover`): committed if the hold is still open, charged afresh under a
 * reservation derived from it if recovery has returned the hold meanwhile, and never twice however
 * often this runs (a crash here is settled again by the next runner, and finds it done).
 */
import type { CreditLedger } from '@subx/credits';
import type { Logger } from '@subx/ports';
import type { JobDoc } from './model.ts';
import type { JobStore } from './store.ts';

export async function settleLeftovers(
  deps: {
    store: Pick<JobStore, 'resultsOf' | 'noteReservation'>;
    credits: Pick<CreditLedger, 'settleLeftover'>;
    logger: Pick<Logger, 'info' | 'warn'>;
    /** The lease owner now (noting needs it; dropping a settled reservation does not). */
    owner: string;
  },
  job: JobDoc,
): Promise<void> {
  for (const reservationId of Object.keys(job.open_reservations ?? {})) {
    const recorded = await deps.store.resultsOf(job._id, reservationId);
    const credits = recorded.reduce((sum, result) => sum + (result.credits ?? 0), 0);
    const outcome = await deps.credits.settleLeftover({
      reservationId,
      accountId: job.account_id,
      operation: 'jobs',
      requestId: job.request_id,
      credits,
      usage: {
        successfulItems: recorded.filter((result) => result.success).length,
        attemptedItems: recorded.length,
      },
    });
    const log = { job_id: job._id, account_id: job.account_id, reservation_id: reservationId, credits };
    if (outcome === 'unpaid') deps.logger.warn(log, 'items delivered by a runner that died stay unpaid');
    else if (outcome !== 'committed') deps.logger.info({ ...log, outcome }, 'settled what a runner left');
    await deps.store.noteReservation(job._id, deps.owner, reservationId, false);
  }
}
