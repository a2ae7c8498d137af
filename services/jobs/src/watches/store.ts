/**
 * Watches on the document store port (MongoDB, FerretDB or in-memory). Every change is one
 * conditional update of one document; a run's writes are guarded by its lease, so a replica that
 * lost the lease (it stalled past `lease_until`, another took the watch over) records nothing.
 */
import type { DocumentStore } from '@subx/ports';
import type { SeenMark, WatchDoc, WatchPause, WatchPending, WatchRun } from './model.ts';

export const WATCHES_COLLECTION = 'watches';

export interface WatchStore {
  ensureIndexes(): Promise<void>;
  create(watch: WatchDoc): Promise<void>;
  get(accountId: string, watchId: string): Promise<WatchDoc | null>;
  /** Newest first. */
  list(accountId: string, limit: number): Promise<WatchDoc[]>;
  count(accountId: string): Promise<number>;
  delete(accountId: string, watchId: string): Promise<boolean>;
  /** Takes the watch for one run if nobody holds it; null when someone does (or it is gone). */
  claim(watchId: string, owner: string, nowMs: number, leaseMs: number): Promise<WatchDoc | null>;
  /**
   * Pauses the account's running watches created with this key, and those stored before watches
   * carried their key (whichever key made them, it is not known to be the owner's); their ids.
   */
  pauseCreatedWith(accountId: string, keyId: string, pause: WatchPause): Promise<string[]>;
  /** Clears the pause and makes the watch due now; null when it is not the account's or not paused. */
  resume(accountId: string, watchId: string, nowMs: number): Promise<WatchDoc | null>;
  /**
   * Watches due to run, not held and not paused, soonest first; `except` leaves out accounts (at
   * their share of this poll) and watches (already taken).
   */
  due(
    nowMs: number,
    limit: number,
    except?: { accounts?: string[]; watches?: string[] },
  ): Promise<WatchDoc[]>;
  /** Records a run and gives the lease back; false when `owner` no longer held it. */
  finishRun(
    watchId: string,
    owner: string,
    run: {
      seen: string[];
      /** When the ids of `seen` were found (history.ts); absent: left as stored. */
      seenMarks?: SeenMark[];
      pending: WatchPending[];
      last: WatchRun;
      nextRunAt: number;
      nowMs: number;
    },
  ): Promise<boolean>;
  /**
   * Sets (days) or clears (null) the account's `watch_history_days` on each of its watches, their
   * history due for a trim at once; how many watches it touched.
   */
  setHistoryDays(accountId: string, days: number | null, nowMs: number): Promise<number>;
  /** Watches whose history is due for a trim (`history_check_at` passed), not held by a run. */
  historyDue(nowMs: number, limit: number): Promise<WatchDoc[]>;
  /**
   * Replaces the watch's history with what is left of it, unless a run holds or has changed the
   * watch, or another sweep trimmed it, since `read` was read (then false: nothing is written).
   */
  trimHistory(
    read: WatchDoc,
    kept: { seen: string[]; seenMarks: SeenMark[]; pending: WatchPending[] },
    nextCheckAt: number,
    nowMs: number,
  ): Promise<boolean>;
}

export function createWatchStore(store: DocumentStore): WatchStore {
  const watches = store.collection<WatchDoc>(WATCHES_COLLECTION);
  return {
    async ensureIndexes() {
      await watches.createIndex({ account_id: 1, _id: -1 }, { name: 'by_account' });
      await watches.createIndex({ next_run_at: 1 }, { name: 'by_next_run' });
      await watches.createIndex({ history_check_at: 1 }, { name: 'by_history_check' });
    },
    create: (watch) => watches.insertOne(watch),
    get: (accountId, watchId) => watches.findOne({ _id: watchId, account_id: accountId }),
    list: (accountId, limit) => watches.find({ account_id: accountId }, { sort: { _id: -1 }, limit }),
    count: (accountId) => watches.countDocuments({ account_id: accountId }),
    async delete(accountId, watchId) {
      const { deletedCount } = await watches.deleteOne({ _id: watchId, account_id: accountId });
      return deletedCount > 0;
    },
    claim: (watchId, owner, nowMs, leaseMs) =>
      watches.findOneAndUpdate(
        { _id: watchId, lease_until: { $lt: nowMs } },
        { $set: { lease_owner: owner, lease_until: nowMs + leaseMs } },
        { returnDocument: 'after' },
      ),
    async pauseCreatedWith(accountId, keyId, pause) {
      const paused: string[] = [];
      const made = { account_id: accountId, key_id: { $in: [keyId, null] }, paused: null };
      for (const watch of await watches.find(made, { sort: { _id: 1 } })) {
        const { matchedCount } = await watches.updateOne(
          { _id: watch._id, paused: null },
          { $set: { paused: pause, updated_at: pause.at } },
        );
        if (matchedCount > 0) paused.push(watch._id);
      }
      return paused;
    },
    resume: (accountId, watchId, nowMs) =>
      watches.findOneAndUpdate(
        { _id: watchId, account_id: accountId, paused: { $ne: null } },
        // A paused watch may have missed runs: the next is due at once.
        { $set: { paused: null, next_run_at: nowMs, updated_at: nowMs } },
        { returnDocument: 'after' },
      ),
    due: (nowMs, limit, except = {}) =>
      watches.find(
        {
          next_run_at: { $lte: nowMs },
          lease_until: { $lt: nowMs },
          paused: null,
          ...(except.accounts?.length ? { account_id: { $nin: except.accounts } } : {}),
          ...(except.watches?.length ? { _id: { $nin: except.watches } } : {}),
        },
        { sort: { next_run_at: 1 }, limit },
      ),
    async finishRun(watchId, owner, run) {
      const { matchedCount } = await watches.updateOne(
        { _id: watchId, lease_owner: owner },
        {
          $set: {
            seen: run.seen,
            ...(run.seenMarks ? { seen_marks: run.seenMarks } : {}),
            pending: run.pending,
            last_run: run.last,
            runs: run.last.run,
            next_run_at: run.nextRunAt,
            updated_at: run.nowMs,
            lease_owner: null,
            lease_until: 0,
          },
        },
      );
      return matchedCount > 0;
    },
    async setHistoryDays(accountId, days, nowMs) {
      let touched = 0;
      for (const watch of await watches.find({ account_id: accountId }, { sort: { _id: 1 } })) {
        const { matchedCount } = await watches.updateOne(
          { _id: watch._id },
          days === null
            ? { $unset: { history_days: '', history_check_at: '' } }
            : { $set: { history_days: days, history_check_at: nowMs } },
        );
        touched += matchedCount;
      }
      return touched;
    },
    historyDue: (nowMs, limit) =>
      watches.find(
        { history_check_at: { $lte: nowMs }, lease_until: { $lt: nowMs } },
        { sort: { history_check_at: 1 }, limit },
      ),
    async trimHistory(read, kept, nextCheckAt, nowMs) {
      const { matchedCount } = await watches.updateOne(
        {
          _id: read._id,
          lease_until: { $lt: nowMs },
          runs: read.runs,
          history_check_at: read.history_check_at ?? null,
        },
        {
          $set: {
            seen: kept.seen,
            seen_marks: kept.seenMarks,
            pending: kept.pending,
            history_check_at: nextCheckAt,
          },
        },
      );
      return matchedCount > 0;
    },
  };
}
