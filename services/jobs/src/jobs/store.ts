/**
 * Jobs on the document store port (MongoDB, FerretDB or in-memory). No transactions: every state
 * change is one conditional update of one document, and every write a runner makes is guarded by
 * its lease (`lease_owner`), so a runner that lost its lease (it stalled, another gateway took the
 * job over) cannot move the job on.
 */
import { randomBytes } from 'node:crypto';
import { DuplicateKeyError } from '@subx/ports';
import type { DocumentStore, Filter } from '@subx/ports';
import { TERMINAL_STATUSES, resultId } from './model.ts';
import type { JobDoc, JobError, JobItem, JobItemsDoc, JobResultDoc } from './model.ts';
import type { JobStatus } from '@subx/public-api';

export const JOBS_COLLECTION = 'jobs';
export const JOB_ITEMS_COLLECTION = 'job_items';
export const JOB_RESULTS_COLLECTION = 'job_results';

/**
 * `job_` + the creation time (base 36, fixed width) + 64 random bits: ids sort by creation, so
 * "newest first" and the list cursor are one index on `_id`.
 */
export function newJobId(nowMs: number): string {
  return `job_${nowMs.toString(36).padStart(9, '0')}${randomBytes(8).toString('hex')}`;
}

interface Claim {
  job: JobDoc;
  /** Another runner had it (its lease ran out): resume, do not announce a start again. */
  resumed: boolean;
}

export interface JobStore {
  ensureIndexes(): Promise<void>;
  create(job: JobDoc, items: JobItem[] | null): Promise<void>;
  /** The account's jobs waiting to start and running now. */
  countOpen(accountId: string): Promise<{ queued: number; running: number }>;
  /**
   * The account's queued and running jobs created with this key, oldest first, and those stored
   * before jobs carried their key (whichever key made them, it is not known to be the owner's).
   */
  openCreatedWith(accountId: string, keyId: string): Promise<JobDoc[]>;
  /** Queued jobs created before `cutoffMs`, oldest first (they expire unstarted). */
  queuedBefore(cutoffMs: number, limit: number): Promise<JobDoc[]>;
  get(accountId: string, jobId: string): Promise<JobDoc | null>;
  byId(jobId: string): Promise<JobDoc | null>;
  /** Newest first; `beforeId` is the last id of the previous page. */
  list(accountId: string, options: { limit: number; beforeId?: string }): Promise<JobDoc[]>;
  /**
   * The next job that can run, leased to `owner`: a running one whose lease lapsed first, then
   * queued ones in fair order (accounts take turns); null when none. At most
   * `maxRunningPerAccount` jobs of one account run at once.
   */
  claimNext(
    owner: string,
    nowMs: number,
    leaseMs: number,
    maxRunningPerAccount: number,
  ): Promise<Claim | null>;
  /** Extends the lease; null when `owner` no longer holds the job. Returns the job as it is now. */
  renewLease(jobId: string, owner: string, nowMs: number, leaseMs: number): Promise<JobDoc | null>;
  /** Gives the job back at once (a stopping gateway), so another picks it up without waiting. */
  releaseLease(jobId: string, owner: string, retryAtMs?: number): Promise<void>;
  /**
   * Notes a reservation of items about to run (`open`), or that it was committed (`!open`), on the
   * job: whoever resumes the job settles the ones still noted (leftovers.ts). Noting needs the
   * lease; dropping does not (a settled reservation is settled whoever holds the job now).
   */
  noteReservation(jobId: string, owner: string, reservationId: string, open: boolean): Promise<void>;
  /** The results recorded under a reservation (at most a refill's items). */
  resultsOf(jobId: string, reservationId: string): Promise<JobResultDoc[]>;
  items(jobId: string): Promise<JobItem[] | null>;
  setItems(
    jobId: string,
    owner: string,
    items: JobItem[],
    info: { title: string; id: string } | null,
    nowMs: number,
  ): Promise<boolean>;
  resultsBetween(jobId: string, from: number, to: number): Promise<JobResultDoc[]>;
  /** false: that item already has a result (a resumed job); it is neither run nor charged again. */
  insertResult(doc: JobResultDoc): Promise<boolean>;
  /** Results from `fromIndex` on, in source order. */
  results(jobId: string, fromIndex: number, limit: number): Promise<JobResultDoc[]>;
  result(jobId: string, index: number): Promise<JobResultDoc | null>;
  /**
   * Moves `next_index` from `from` to `to`, replaces the parked items (`JobDoc.parked`) and adds
   * `counts` (the results the prefix passed, and those of items that left `parked`) in one update,
   * so a crash never counts a result twice nor loses a parked item (progress.ts).
   */
  advance(
    jobId: string,
    owner: string,
    progress: {
      from: number;
      to: number;
      parked: Record<string, number>;
      succeeded: number;
      failed: number;
      charged: number;
    },
    nowMs: number,
  ): Promise<boolean>;
  /**
   * The terminal transition, once: from queued/running (held by `owner` when given) to `status`.
   * The job as it is afterwards, or null when it was already terminal or not held.
   */
  finish(
    jobId: string,
    status: Exclude<JobStatus, 'queued' | 'running'>,
    options: {
      owner?: string;
      error?: JobError | null;
      nowMs: number;
      resultsTtlMs: number;
      /** How long its chunks are served (at most `resultsTtlMs`); absent: as long as its results. */
      chunksTtlMs?: number;
      keepLease?: boolean;
      /** Results not counted yet (a run that ends the job): added in the same update. */
      counts?: { succeeded: number; failed: number; charged: number };
    },
  ): Promise<JobDoc | null>;
  /** Terminal jobs whose event and webhook still have to be handed on (no runner holds them). */
  unnotified(nowMs: number, limit: number): Promise<JobDoc[]>;
  markNotified(jobId: string): Promise<void>;
  /** Removes results past `expires_at` and jobs past `purge_at`. Returns how many jobs were touched. */
  purge(nowMs: number, limit: number): Promise<number>;
  /**
   * What `purge` does, counted: up to `limit` jobs past `expires_at` lose their results and items,
   * up to `limit` past `purge_at` are deleted; `results` is the result documents deleted.
   */
  purgeExpired(nowMs: number, limit: number): Promise<{ jobs: number; results: number }>;
  /** Closes the chunks of up to `limit` jobs past `chunks_expire_at`; how many it closed. */
  closeChunks(nowMs: number, limit: number): Promise<number>;
  /**
   * A lowered retention applied to the account's ended jobs whose results are kept: `expires_at`,
   * `purge_at` and `chunks_expire_at` brought forward to what the new setting gives, never pushed
   * back. One page of jobs after `afterId` (by id); the last id seen, null after the last page.
   */
  shortenRetention(
    accountId: string,
    ttls: { resultsMs: number; chunksMs: number },
    page: { afterId: string | null; limit: number },
  ): Promise<{ lastId: string | null; shortened: number }>;
}

export function createJobStore(store: DocumentStore): JobStore {
  const jobs = store.collection<JobDoc>(JOBS_COLLECTION);
  const itemsCol = store.collection<JobItemsDoc>(JOB_ITEMS_COLLECTION);
  const results = store.collection<JobResultDoc>(JOB_RESULTS_COLLECTION);

  /** Accounts at their running cap that one claim looks past before it gives up for this poll. */
  const MAX_CLAIM_LOOKS = 50;

  async function countRunning(accountId: string): Promise<number> {
    return jobs.countDocuments({ account_id: accountId, status: 'running' });
  }

  async function purgeExpired(nowMs: number, limit: number): Promise<{ jobs: number; results: number }> {
    // Each step is idempotent: replicas sweeping side by side delete each document once, and
    // the counts are what each of them actually deleted.
    let touched = 0;
    let deleted = 0;
    const expired = await jobs.find({ expires_at: { $lt: nowMs }, results_purged: false }, { limit });
    for (const job of expired) {
      deleted += (await results.deleteMany({ job_id: job._id })).deletedCount;
      await itemsCol.deleteOne({ _id: job._id });
      await jobs.updateOne({ _id: job._id }, { $set: { results_purged: true } });
      touched += 1;
    }
    const gone = await jobs.find({ purge_at: { $lt: nowMs } }, { limit });
    for (const job of gone) {
      deleted += (await results.deleteMany({ job_id: job._id })).deletedCount;
      await itemsCol.deleteOne({ _id: job._id });
      await jobs.deleteOne({ _id: job._id });
      touched += 1;
    }
    return { jobs: touched, results: deleted };
  }

  return {
    async ensureIndexes() {
      await jobs.createIndex({ account_id: 1, _id: -1 }, { name: 'jobs_by_account' });
      await jobs.createIndex({ status: 1, lease_until: 1 }, { name: 'jobs_runnable' });
      await jobs.createIndex({ status: 1, queue_rank: 1, _id: 1 }, { name: 'jobs_fair_order' });
      await jobs.createIndex({ notified: 1, status: 1 }, { name: 'jobs_unnotified' });
      await jobs.createIndex({ expires_at: 1 }, { name: 'jobs_expiry' });
      await jobs.createIndex({ purge_at: 1 }, { name: 'jobs_purge' });
      await jobs.createIndex({ chunks_expire_at: 1 }, { name: 'jobs_chunks_expiry' });
      await results.createIndex({ job_id: 1, index: 1 }, { name: 'job_results_in_order' });
    },

    async create(job, items) {
      // The items first: a job document is only ever seen with its items in place.
      if (items) await itemsCol.insertOne({ _id: job._id, items });
      await jobs.insertOne(job);
    },

    countOpen: (accountId) =>
      Promise.all([
        jobs.countDocuments({ account_id: accountId, status: 'queued' }),
        jobs.countDocuments({ account_id: accountId, status: 'running' }),
      ]).then(([queued, running]) => ({ queued, running })),

    openCreatedWith: (accountId, keyId) =>
      jobs.find(
        { account_id: accountId, key_id: { $in: [keyId, null] }, status: { $in: ['queued', 'running'] } },
        { sort: { _id: 1 } },
      ),

    queuedBefore: (cutoffMs, limit) =>
      jobs.find({ status: 'queued', created_at: { $lt: cutoffMs } }, { sort: { _id: 1 }, limit }),

    get: (accountId, jobId) => jobs.findOne({ _id: jobId, account_id: accountId }),
    byId: (jobId) => jobs.findOne({ _id: jobId }),

    list(accountId, { limit, beforeId }) {
      const filter: Filter = { account_id: accountId };
      if (beforeId) filter._id = { $lt: beforeId };
      return jobs.find(filter, { sort: { _id: -1 }, limit });
    },

    async claimNext(owner, nowMs, leaseMs, maxRunningPerAccount) {
      // A runner died or stalled with a job: take it over where it was (it already counts as
      // running for its account).
      const lapsed = await jobs.find(
        { status: 'running', lease_until: { $lt: nowMs } },
        { sort: { _id: 1 }, limit: 20 },
      );
      for (const candidate of lapsed) {
        const taken = await jobs.findOneAndUpdate(
          { _id: candidate._id, status: 'running', lease_until: { $lt: nowMs } },
          { $set: { lease_owner: owner, lease_until: nowMs + leaseMs, updated_at: nowMs } },
          { returnDocument: 'after' },
        );
        if (taken) return { job: taken, resumed: true };
      }
      // Queued jobs in fair order: by their place in their own account's queue (`queue_rank`),
      // then by age, so accounts take turns however many jobs one of them queued. An account at
      // its running cap is left out of the next look, so it never hides the accounts behind it.
      const atCap: string[] = [];
      for (let look = 0; look < MAX_CLAIM_LOOKS; look++) {
        const [candidate] = await jobs.find(
          { status: 'queued', lease_until: { $lt: nowMs }, account_id: { $nin: atCap } },
          { sort: { queue_rank: 1, _id: 1 }, limit: 1 },
        );
        if (!candidate) return null;
        if ((await countRunning(candidate.account_id)) >= maxRunningPerAccount) {
          atCap.push(candidate.account_id);
          continue;
        }
        const taken = await jobs.findOneAndUpdate(
          { _id: candidate._id, status: 'queued', lease_until: { $lt: nowMs } },
          {
            $set: {
              status: 'running',
              lease_owner: owner,
              lease_until: nowMs + leaseMs,
              started_at: nowMs,
              updated_at: nowMs,
            },
          },
          { returnDocument: 'after' },
        );
        if (!taken) continue;
        // Two gateways may both have seen room for one more: the count after the claim decides,
        // and the loser puts its job back (neither keeps more than the cap running).
        if ((await countRunning(candidate.account_id)) > maxRunningPerAccount) {
          await jobs.updateOne(
            { _id: taken._id, lease_owner: owner, status: 'running' },
            {
              $set: {
                status: 'queued',
                lease_owner: null,
                lease_until: nowMs + 250 + Math.floor(Math.random() * 750),
                started_at: null,
              },
            },
          );
          atCap.push(candidate.account_id);
          continue;
        }
        return { job: taken, resumed: false };
      }
      return null;
    },

    renewLease: (jobId, owner, nowMs, leaseMs) =>
      jobs.findOneAndUpdate(
        { _id: jobId, lease_owner: owner },
        { $set: { lease_until: nowMs + leaseMs } },
        { returnDocument: 'after' },
      ),

    async releaseLease(jobId, owner, retryAtMs = 0) {
      await jobs.updateOne(
        { _id: jobId, lease_owner: owner },
        { $set: { lease_owner: null, lease_until: retryAtMs } },
      );
    },

    async items(jobId) {
      return (await itemsCol.findOne({ _id: jobId }))?.items ?? null;
    },

    async setItems(jobId, owner, items, info, nowMs) {
      await itemsCol.updateOne({ _id: jobId }, { $set: { items } }, { upsert: true });
      const updated = await jobs.updateOne(
        { _id: jobId, lease_owner: owner },
        { $set: { total: items.length, source_info: info, updated_at: nowMs } },
      );
      return updated.matchedCount === 1;
    },

    resultsBetween: (jobId, from, to) =>
      results.find({ job_id: jobId, index: { $gte: from, $lt: to } }, { sort: { index: 1 } }),

    async insertResult(doc) {
      try {
        await results.insertOne(doc);
        return true;
      } catch (error) {
        if (error instanceof DuplicateKeyError) return false;
        throw error;
      }
    },

    results: (jobId, fromIndex, limit) =>
      results.find({ job_id: jobId, index: { $gte: fromIndex } }, { sort: { index: 1 }, limit }),

    result: (jobId, index) => results.findOne({ _id: resultId(jobId, index) }),

    async noteReservation(jobId, owner, reservationId, open) {
      const field = `open_reservations.${reservationId}`;
      if (open) {
        const noted = await jobs.updateOne({ _id: jobId, lease_owner: owner }, { $set: { [field]: true } });
        if (noted.matchedCount === 0) throw new Error(`job ${jobId} is no longer held by ${owner}`);
      } else {
        await jobs.updateOne({ _id: jobId }, { $unset: { [field]: '' } });
      }
    },

    resultsOf: (jobId, reservationId) =>
      results.find({ job_id: jobId, reservation_id: reservationId }, { sort: { index: 1 } }),

    async advance(jobId, owner, progress, nowMs) {
      const updated = await jobs.updateOne(
        { _id: jobId, lease_owner: owner, next_index: progress.from },
        {
          $set: { next_index: progress.to, parked: progress.parked, updated_at: nowMs },
          $inc: {
            succeeded: progress.succeeded,
            failed: progress.failed,
            credits_charged: progress.charged,
          },
        },
      );
      return updated.matchedCount === 1;
    },

    finish(
      jobId,
      status,
      { owner, error = null, nowMs, resultsTtlMs, chunksTtlMs, keepLease = false, counts },
    ) {
      const filter: Filter = { _id: jobId, status: { $in: ['queued', 'running'] } };
      if (owner !== undefined) filter.lease_owner = owner;
      return jobs.findOneAndUpdate(
        filter,
        {
          $set: {
            status,
            error,
            finished_at: nowMs,
            updated_at: nowMs,
            expires_at: nowMs + resultsTtlMs,
            chunks_expire_at: nowMs + Math.min(chunksTtlMs ?? resultsTtlMs, resultsTtlMs),
            // The job itself stays readable (and its results answer 410) as long again.
            purge_at: nowMs + 2 * resultsTtlMs,
            notified: false,
            // A running job canceled by its owner keeps its lease: the runner records the items
            // in flight (done items are kept and charged), then hands the notice on.
            ...(keepLease ? {} : { lease_owner: null, lease_until: 0 }),
          },
          ...(counts
            ? {
                $inc: {
                  succeeded: counts.succeeded,
                  failed: counts.failed,
                  credits_charged: counts.charged,
                },
              }
            : {}),
        },
        { returnDocument: 'after' },
      );
    },

    unnotified: (nowMs, limit) =>
      jobs.find(
        { notified: false, status: { $in: [...TERMINAL_STATUSES] }, lease_until: { $lt: nowMs } },
        { limit },
      ),

    async markNotified(jobId) {
      await jobs.updateOne({ _id: jobId }, { $set: { notified: true } });
    },

    async purge(nowMs, limit) {
      return (await purgeExpired(nowMs, limit)).jobs;
    },

    purgeExpired,

    async closeChunks(nowMs, limit) {
      let closed = 0;
      const due = { chunks_expire_at: { $lt: nowMs }, chunks_purged: { $ne: true } };
      for (const job of await jobs.find(due, { limit })) {
        const { modifiedCount } = await jobs.updateOne(
          { _id: job._id, chunks_purged: { $ne: true } },
          { $set: { chunks_purged: true } },
        );
        closed += modifiedCount;
      }
      return closed;
    },

    async shortenRetention(accountId, ttls, page) {
      const filter: Filter = {
        account_id: accountId,
        results_purged: false,
        finished_at: { $ne: null },
      };
      if (page.afterId !== null) filter._id = { $gt: page.afterId };
      const found = await jobs.find(filter, { sort: { _id: 1 }, limit: page.limit });
      let shortened = 0;
      for (const job of found) {
        const ended = job.finished_at!;
        const expiresAt = Math.min(job.expires_at ?? Infinity, ended + ttls.resultsMs);
        const chunksAt = Math.min(
          job.chunks_expire_at ?? job.expires_at ?? Infinity,
          ended + Math.min(ttls.chunksMs, ttls.resultsMs),
          expiresAt,
        );
        const purgeAt = Math.min(job.purge_at ?? Infinity, expiresAt + ttls.resultsMs);
        if (expiresAt === job.expires_at && chunksAt === job.chunks_expire_at && purgeAt === job.purge_at)
          continue;
        await jobs.updateOne(
          { _id: job._id },
          { $set: { expires_at: expiresAt, chunks_expire_at: chunksAt, purge_at: purgeAt } },
        );
        shortened += 1;
      }
      return {
        lastId: found.length < page.limit ? null : found.at(-1)!._id,
        shortened,
      };
    },
  };
}
