/**
 * Deleting everything the job service holds of a workspace (GDPR art. 17; the gateway's
 * DELETE /admin/v1/accounts/{id} calls it over gRPC, DeleteAccountData). In this order, so that
 * nothing new appears behind the deletion:
 *
 * 1. the watches are deleted (a watch no longer there starts no run, so no new job);
 * 2. the queued and running jobs are canceled; a running one's runner records the items in flight
 *    and gives the job back, which is waited for, at most `settleMs`;
 * 3. every job with its items and results is deleted, a page at a time, then once more whatever a
 *    watch run in flight during step 1 may have created;
 * 4. the webhook deliveries and the signing secrets are deleted.
 *
 * Each step is a delete by the account's id: repeating the whole call (after a crash, a timeout)
 * finds what is left and deletes it, and a call on an account with nothing answers zeros.
 */
import { nothingDeleted, type AccountDataApi, type AccountDataDeleted } from '@subx/backends';
import { AppError, Errors } from '@subx/errors';
import type { Clock, DocumentStore } from '@subx/ports';
import type { JobsService } from './jobs/service.ts';
import { JOBS_COLLECTION, JOB_ITEMS_COLLECTION, JOB_RESULTS_COLLECTION } from './jobs/store.ts';
import type { JobDoc } from './jobs/model.ts';
import { WATCHES_COLLECTION } from './watches/store.ts';
import { WEBHOOK_SECRETS_COLLECTION } from './webhooks/secrets.ts';
import { WEBHOOK_DELIVERIES_COLLECTION } from './webhooks/deliveries.ts';

type AccountDataEraser = AccountDataApi['delete'];

/** Jobs read and deleted per round. */
const JOBS_PAGE = 200;
/**
 * Rounds of step 3 at most: far beyond any account (2,000 × 200 jobs); it only stops a store that
 * never runs dry from looping forever. The caller repeats the call to go on.
 */
const MAX_ROUNDS = 2_000;

const isAccountId = (value: string) => /^acct_[0-9a-f]{32}$/.test(value);

export function createAccountDataEraser(deps: {
  store: DocumentStore;
  jobs: Pick<JobsService, 'cancel'>;
  clock: Clock;
  /** How long canceled running jobs are waited for (their runners give them back). Default 5 s. */
  settleMs?: number;
  /** How often the wait looks. Default 100 ms. */
  pollMs?: number;
  sleep?: (ms: number) => Promise<void>;
}): AccountDataEraser {
  const { store, clock } = deps;
  const settleMs = deps.settleMs ?? 5_000;
  const pollMs = deps.pollMs ?? 100;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const jobs = store.collection<JobDoc>(JOBS_COLLECTION);
  const items = store.collection(JOB_ITEMS_COLLECTION);
  const results = store.collection(JOB_RESULTS_COLLECTION);
  const watches = store.collection(WATCHES_COLLECTION);
  const secrets = store.collection(WEBHOOK_SECRETS_COLLECTION);
  const deliveries = store.collection(WEBHOOK_DELIVERIES_COLLECTION);

  const held = (accountId: string) =>
    jobs.countDocuments({
      account_id: accountId,
      lease_owner: { $ne: null },
      lease_until: { $gt: clock.now() },
    });

  async function cancelOpen(accountId: string): Promise<number> {
    const open = await jobs.find({ account_id: accountId, status: { $in: ['queued', 'running'] } });
    let canceled = 0;
    for (const job of open) {
      try {
        await deps.jobs.cancel(accountId, job._id);
        canceled += 1;
      } catch (err) {
        // It finished or went in between: nothing left to stop.
        if (!(err instanceof AppError && (err.code === 'JOB_FINISHED' || err.code === 'JOB_NOT_FOUND'))) {
          throw err;
        }
      }
    }
    return canceled;
  }

  /** Waits (bounded) until no runner holds a job of the account; how many are still held. */
  async function settled(accountId: string): Promise<number> {
    const deadline = clock.now() + settleMs;
    for (;;) {
      const still = await held(accountId);
      if (still === 0 || clock.now() >= deadline) return still;
      await sleep(Math.min(pollMs, Math.max(1, deadline - clock.now())));
    }
  }

  async function deleteJobs(accountId: string, into: AccountDataDeleted): Promise<void> {
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      const page = await jobs.find({ account_id: accountId }, { limit: JOBS_PAGE });
      if (page.length === 0) return;
      for (const job of page) {
        into.job_results += (await results.deleteMany({ job_id: job._id })).deletedCount;
        await items.deleteOne({ _id: job._id });
        into.jobs += (await jobs.deleteOne({ _id: job._id, account_id: accountId })).deletedCount;
      }
    }
    throw new Error(`the jobs of ${accountId} did not run dry in ${MAX_ROUNDS} rounds`);
  }

  return async (accountId) => {
    if (!isAccountId(accountId)) throw Errors.invalidRequest('account_id is not an account id.');
    const deleted = nothingDeleted();
    deleted.watches = (await watches.deleteMany({ account_id: accountId })).deletedCount;
    deleted.canceled_jobs = await cancelOpen(accountId);
    deleted.jobs_still_held = await settled(accountId);
    await deleteJobs(accountId, deleted);
    // A watch run that was under way in step 1 may have made one more job meanwhile.
    deleted.canceled_jobs += await cancelOpen(accountId);
    await deleteJobs(accountId, deleted);
    deleted.webhook_deliveries = (await deliveries.deleteMany({ account_id: accountId })).deletedCount;
    deleted.webhook_secrets = (await secrets.deleteMany({ _id: accountId })).deletedCount;
    return deleted;
  };
}
