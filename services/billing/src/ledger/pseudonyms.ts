/**
 * A deleted workspace in billing's records (accounts.v1, `AccountDeleted`): the ledger must stay
 * (what was charged, and the totals, are the business's record), the person must not be found in
 * it. So the account id is replaced everywhere it is stored, by a pseudonym made of random bytes
 * (`anon_` + 32 hex) that is derived from nothing and, once the grace period is over, recorded
 * nowhere beside the id:
 *
 * - `usage_ledger`: each entry's `account_id` is rewritten (its `_id` is the event's id);
 * - `usage_daily` and `usage_requests_daily`: their `_id` holds the account id, so each day's
 *   document is merged into the pseudonym's day, then deleted.
 *
 * A tombstone (`deleted_accounts`, `_id` = SHA-256 of the account id: it says that an account was
 * deleted, not whose) keeps the pseudonym for `graceMs` (1 h): usage of the account still in
 * flight (an outbox entry published after the deletion event) lands under the same pseudonym, so
 * a request tally reported again is not counted twice. Then `sweep` erases the pseudonym from it;
 * usage arriving later still is recorded under a fresh pseudonym of its own (totals still add up).
 *
 * Every step may be repeated: a redelivered event, or a crash half-way, finishes the moves.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Collection, DocumentStore } from '@subx/ports';
import { DuplicateKeyError } from '@subx/ports';
import type { DailyAggregate, LedgerEntry } from './usage-ledger.ts';
import type { RequestDaily } from './request-counts.ts';
import { REQUEST_COUNTS_COLLECTION } from './request-counts.ts';

export const DELETED_ACCOUNTS_COLLECTION = 'deleted_accounts';

interface Tombstone {
  /** SHA-256 (hex) of the account id. */
  _id: string;
  /** Erased (null) once `linked_until` passed. */
  pseudonym: string | null;
  linked_until: number | null;
  deleted_at: number;
  [key: string]: unknown;
}

/** A daily aggregate while it is merged: the token marks its counts in the target, once. */
type MovingAggregate = DailyAggregate & { move_token?: string };

export interface PseudonymisedAccount {
  ledger_entries: number;
  daily_usage: number;
  request_days: number;
}

export interface AccountPseudonyms {
  /** The id a usage event of this account is recorded under: its own, or a deleted one's pseudonym. */
  accountOf(accountId: string): Promise<string>;
  /** Replaces the account id in every billing record; what was moved. Idempotent. */
  pseudonymise(accountId: string): Promise<PseudonymisedAccount>;
  /** Erases the pseudonyms whose grace period ended; how many. */
  sweep(): Promise<number>;
}

/** Documents moved per read; rounds at most (a store that never runs dry must not loop forever). */
const PAGE = 500;
const MAX_ROUNDS = 10_000;

const newPseudonym = () => `anon_${randomBytes(16).toString('hex')}`;
const tombstoneId = (accountId: string) => createHash('sha256').update(accountId).digest('hex');

export async function createAccountPseudonyms(
  store: DocumentStore,
  clock: { now(): number },
  options: { graceMs?: number } = {},
): Promise<AccountPseudonyms> {
  const graceMs = options.graceMs ?? 60 * 60_000;
  const tombstones: Collection<Tombstone> = store.collection<Tombstone>(DELETED_ACCOUNTS_COLLECTION);
  const ledger = store.collection<LedgerEntry>('usage_ledger');
  const daily = store.collection<MovingAggregate>('usage_daily');
  const requests = store.collection<RequestDaily>(REQUEST_COUNTS_COLLECTION);
  await tombstones.createIndex({ linked_until: 1 });

  /** The tombstone of the account, made on the first deletion event. */
  async function tombstoneOf(accountId: string): Promise<Tombstone> {
    const _id = tombstoneId(accountId);
    const found = await tombstones.findOne({ _id });
    if (found) return found;
    const now = clock.now();
    const made: Tombstone = { _id, pseudonym: newPseudonym(), linked_until: now + graceMs, deleted_at: now };
    try {
      await tombstones.insertOne(made);
      return made;
    } catch (err) {
      if (!(err instanceof DuplicateKeyError)) throw err;
      return (await tombstones.findOne({ _id }))!;
    }
  }

  /** Runs `step` on pages of `find` until it finds nothing; how many documents it handled. */
  async function drain<T>(find: () => Promise<T[]>, step: (doc: T) => Promise<void>): Promise<number> {
    let moved = 0;
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      const page = await find();
      if (page.length === 0) return moved;
      for (const doc of page) await step(doc);
      moved += page.length;
    }
    throw new Error(`billing records did not run dry in ${MAX_ROUNDS} rounds`);
  }

  /** Adds one day's aggregate to the pseudonym's day (once, by its token), then deletes it. */
  async function moveAggregate(doc: MovingAggregate, pseudonym: string): Promise<void> {
    let token = doc.move_token;
    if (!token) {
      token = randomBytes(8).toString('hex');
      await daily.updateOne(
        { _id: doc._id, move_token: { $exists: false } },
        { $set: { move_token: token } },
      );
      token = (await daily.findOne({ _id: doc._id }))?.move_token ?? token;
    }
    const inc: Record<string, number> = { requests: doc.requests ?? 0, credits: doc.credits ?? 0 };
    for (const [op, usage] of Object.entries(doc.ops ?? {})) {
      inc[`ops.${op}.requests`] = usage.requests ?? 0;
      inc[`ops.${op}.credits`] = usage.credits ?? 0;
    }
    // Redeliveries of the day's events are still stopped by their markers.
    const set: Record<string, unknown> = { [`moved.${token}`]: clock.now() };
    for (const [eventId, at] of Object.entries(doc.pending ?? {})) set[`pending.${eventId}`] = at;
    try {
      await daily.updateOne(
        { _id: `${pseudonym}:${doc.day}`, [`moved.${token}`]: { $exists: false } },
        { $inc: inc, $set: set, $setOnInsert: { account_id: pseudonym, day: doc.day } },
        { upsert: true },
      );
    } catch (err) {
      // The target exists and carries the token already: merged by an earlier attempt.
      if (!(err instanceof DuplicateKeyError)) throw err;
    }
    await daily.deleteOne({ _id: doc._id });
  }

  /** Each source's newest tally of one day into the pseudonym's day, then the day is deleted. */
  async function moveRequestDay(doc: RequestDaily, pseudonym: string): Promise<void> {
    const target = `${pseudonym}:${doc.day}`;
    for (const [source, tally] of Object.entries(doc.src ?? {})) {
      const path = `src.${source}`;
      const newer = await requests.updateOne(
        { _id: target, [`${path}.seq`]: { $lt: tally.seq } },
        { $set: { [path]: tally } },
      );
      if (newer.matchedCount === 1) continue;
      try {
        await requests.updateOne(
          { _id: target, [path]: { $exists: false } },
          { $set: { [path]: tally }, $setOnInsert: { account_id: pseudonym, day: doc.day } },
          { upsert: true },
        );
      } catch (err) {
        // The target has this source already, from an equal or newer report.
        if (!(err instanceof DuplicateKeyError)) throw err;
      }
    }
    await requests.deleteOne({ _id: doc._id });
  }

  return {
    async accountOf(accountId) {
      const tombstone = await tombstones.findOne({ _id: tombstoneId(accountId) });
      if (!tombstone) return accountId;
      return tombstone.pseudonym ?? newPseudonym();
    },

    async pseudonymise(accountId) {
      const tombstone = await tombstoneOf(accountId);
      // Past the grace period the link is gone: what is left (a race) goes under a fresh one.
      const pseudonym = tombstone.pseudonym ?? newPseudonym();
      const byAccount = { account_id: accountId };
      const ledgerEntries = await drain(
        () => ledger.find(byAccount, { limit: PAGE }),
        async (entry) => {
          await ledger.updateOne(
            { _id: entry._id, account_id: accountId },
            { $set: { account_id: pseudonym } },
          );
        },
      );
      const dailyUsage = await drain(
        () => daily.find(byAccount, { limit: PAGE }),
        (doc) => moveAggregate(doc, pseudonym),
      );
      const requestDays = await drain(
        () => requests.find(byAccount, { limit: PAGE }),
        (doc) => moveRequestDay(doc, pseudonym),
      );
      return { ledger_entries: ledgerEntries, daily_usage: dailyUsage, request_days: requestDays };
    },

    async sweep() {
      const due = await tombstones.find(
        { linked_until: { $lt: clock.now() }, pseudonym: { $ne: null } },
        { limit: PAGE },
      );
      for (const tombstone of due) {
        await tombstones.updateOne({ _id: tombstone._id }, { $set: { pseudonym: null, linked_until: null } });
      }
      return due.length;
    },
  };
}
