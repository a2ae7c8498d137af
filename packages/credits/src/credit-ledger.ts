/**
 * CreditLedger on the DocumentStore, without multi-document transactions (see README.md,
 * "Credits: crash-safe reservation and outbox"). In short:
 *
 * - A reservation is its own document in the `outbox` collection (id = the usage event id).
 * - reserve: insert the reservation (state `open`), then ONE conditional update on the account
 *   takes the credits and records a hold `holds.<id>` — `{ credits: { $gte: amount } }` keeps the
 *   balance non-negative under any concurrency.
 * - commit: ONE conditional update moves the reservation `open → committed` and writes the
 *   serialized CreditUsage event into it (outbox_status `pending`); then ONE conditional update
 *   on the account removes the hold and returns the unused part. The hold's presence guards the
 *   refund, so repeating the step (after a crash, or by the sweeper) can never refund twice.
 * - The outbox relay (`outbox-relay.ts`, given `CREDIT_OUTBOX`) publishes committed reservations
 *   whose event is pending and marks them sent; the ledger knows nothing of it (`onEventPending`
 *   lets the composition root kick it).
 */
import { TOPICS } from '@subx/contracts';
import { randomUUID } from 'node:crypto';
import { creditUsageV1 } from '@subx/contracts';
import { Errors, isAppError } from '@subx/errors';
import { DuplicateKeyError } from '@subx/ports';
import type { Clock, DocumentStore, KeyValueStore } from '@subx/ports';
import { ConfigError, countCredits } from '@subx/service-kit';
import type { CreditLedger, Operation, Reservation, UsageReport } from './types.ts';
import type { AccountBalanceDoc, AccountBalances } from './balances.ts';
import type { Logger } from '@subx/ports';
import type { OutboxEntry, OutboxSpec } from './outbox.ts';
import { USAGE_RETENTION_MS, monthCreditsKey, usageCreditsKey } from './usage-keys.ts';
import { utcDate, utcMonth } from './time.ts';

export const OUTBOX_COLLECTION = 'outbox';
/** A make-up reservation younger than this is its maker's to finish (settleLeftover). */
const MAKE_UP_SETTLE_MS = 10_000;
export const DEFAULT_RESERVATION_TTL_MS = 15 * 60_000;
const CREDIT_USAGE_TOPIC = TOPICS.creditUsage.default;

/**
 * The credit outbox for the relay: a reservation is finished once its hold is settled (taken or
 * returned); its event, if any, must also be sent before it is pruned.
 */
export const CREDIT_OUTBOX: OutboxSpec = {
  collection: OUTBOX_COLLECTION,
  finished: { state: { $in: ['committed', 'released'] }, settled: true },
  pruneIndex: { settled: 1, created_at: 1 },
};

type ReservationState = 'open' | 'committed' | 'released';

export interface ReservationDoc extends OutboxEntry {
  _id: string;
  kind: 'credit_reservation';
  account_id: string;
  operation: Operation;
  request_id: string;
  idempotency_key: string | null;
  amount: number;
  state: ReservationState;
  /** The account's hold for this reservation has been resolved (taken or returned). */
  settled: boolean;
  charged: number;
  created_at: number;
  committed_at: number | null;
  /** Bus message key (the account id). */
  key: string | null;
  /** base64 of the serialized creditUsageV1.CreditUsage. */
  payload: string | null;
  sent_at: number | null;
}

export interface CreditLedgerImpl extends CreditLedger {
  /**
   * Finishes what a crash interrupted: settles holds of finished reservations and releases
   * reservations left open longer than the reservation TTL. Safe to run on every replica.
   */
  recover(): Promise<{ settled: number; expired: number }>;
  /** Creates the indexes recovery queries by (the relay creates its own). Idempotent. */
  init(): Promise<void>;
}

export interface CreditLedgerOptions {
  store: DocumentStore;
  kv: KeyValueStore;
  clock: Clock;
  logger: Logger;
  accounts: Pick<AccountBalances, 'ensureMonthlyAllowance' | 'collection'>;
  topic?: string;
  /**
   * Open reservations older than this are released by `recover` (default 3 min: longer than any
   * request's deadline — playlist 120 s, AI 90 s — so only stranded ones, e.g. whose release
   * failed in a database blip, are taken back; they were held 15 min before).
   */
  reservationTtlMs?: number;
  /** Called after a commit wrote a pending event (the relay flushes early). */
  onEventPending?: () => void;
}

function assertCredits(value: number, max: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0 || value > max) {
    throw new RangeError(`${what} must be an integer between 0 and ${max}, got ${value}`);
  }
}

export function createCreditLedger(options: CreditLedgerOptions): CreditLedgerImpl {
  const { store, kv, clock, logger, accounts: repo } = options;
  const topic = options.topic ?? CREDIT_USAGE_TOPIC;
  const reservationTtlMs = options.reservationTtlMs ?? DEFAULT_RESERVATION_TTL_MS;
  const accounts = repo.collection;
  const outbox = store.collection<ReservationDoc>(OUTBOX_COLLECTION);

  /**
   * Removes the hold and returns `refund` credits; a no-op when the hold is already gone. Answers
   * the balance after it, or undefined when there was no hold left to settle.
   */
  async function settle(
    doc: Pick<ReservationDoc, '_id' | 'account_id'>,
    refund: number,
  ): Promise<number | undefined> {
    const hold = `holds.${doc._id}`;
    const settled = await accounts.findOneAndUpdate(
      { _id: doc.account_id, [hold]: { $exists: true } },
      { $unset: { [hold]: '' }, $inc: { credits: refund } },
      { returnDocument: 'after' },
    );
    await outbox.updateOne({ _id: doc._id }, { $set: { settled: true } });
    return settled ? Math.max(0, (settled as AccountBalanceDoc).credits) : undefined;
  }

  async function countUsage(
    accountId: string,
    operation: string,
    credits: number,
    at: number,
  ): Promise<void> {
    // Embedded usage report only (the billing ledger is the record of truth); best effort.
    try {
      const expireAtMs = at + USAGE_RETENTION_MS;
      await Promise.all([
        kv.increment(usageCreditsKey(accountId, utcDate(at), operation), credits, { expireAtMs }),
        kv.increment(monthCreditsKey(accountId, utcMonth(at)), credits, { expireAtMs }),
      ]);
    } catch (err) {
      logger.warn({ err, accountId }, 'usage counter update failed');
    }
  }

  /**
   * Commits an open reservation for `credits` (at most its amount): one conditional update of its
   * state, so of any number of callers exactly one charges. Writes the usage event with it (the
   * outbox), settles the hold, and answers the balance after it; null when it was not open any
   * more (committed or released by someone else).
   */
  async function commitOpen(
    doc: Pick<
      ReservationDoc,
      '_id' | 'account_id' | 'operation' | 'request_id' | 'idempotency_key' | 'amount'
    >,
    credits: number,
    usage?: UsageReport,
  ): Promise<number | null> {
    const { _id: id, account_id: accountId, operation, request_id: requestId, amount } = doc;
    const now = clock.now();
    let payload: string | null = null;
    if (credits > 0) {
      const event: creditUsageV1.CreditUsage = {
        envelope: {
          eventId: id,
          occurredAt: new Date(now).toISOString(),
          accountId,
          idempotencyKey: doc.idempotency_key ?? requestId,
          traceParent: usage?.attributes?.traceparent ?? '',
        },
        operation,
        credits: BigInt(credits),
        requestId,
        successfulItems: usage?.successfulItems ?? 1,
        attemptedItems: usage?.attemptedItems ?? 1,
        attributes: { ...(usage?.attributes ?? {}) },
      };
      payload = Buffer.from(creditUsageV1.CreditUsage.encode(event).finish()).toString('base64');
    }
    const committed = await outbox.findOneAndUpdate(
      { _id: id, state: 'open' },
      {
        $set: {
          state: 'committed',
          charged: credits,
          committed_at: now,
          outbox_status: credits > 0 ? 'pending' : 'none',
          topic: credits > 0 ? topic : null,
          key: credits > 0 ? accountId : null,
          payload,
        },
      },
      { returnDocument: 'after' },
    );
    // Already released by the sweeper (the request outlived the reservation TTL): nothing to charge.
    if (!committed) return null;
    countCredits(operation, 'charged', credits);
    countCredits(operation, 'released', amount - credits);
    if (credits > 0) options.onEventPending?.();
    const remaining = await settle(committed, amount - credits);
    if (credits > 0) await countUsage(accountId, operation, credits, now);
    return remaining ?? 0;
  }

  function zeroReservation(): Reservation {
    return {
      id: null,
      reserved: 0,
      async commit(credits) {
        assertCredits(credits, 0, 'credits');
      },
      async release() {},
    };
  }

  const ledger: CreditLedgerImpl = {
    async init() {
      await outbox.createIndex({ state: 1, settled: 1 }, { name: 'reservation_unsettled' });
      await outbox.createIndex({ state: 1, created_at: 1 }, { name: 'reservation_open' });
    },

    async reserve(input) {
      const { accountId, operation, amount, requestId } = input;
      assertCredits(amount, Number.MAX_SAFE_INTEGER, 'amount');
      if (amount === 0) return zeroReservation();
      await repo.ensureMonthlyAllowance(accountId);
      const id = input.id ?? randomUUID();
      const doc: ReservationDoc = {
        _id: id,
        kind: 'credit_reservation',
        account_id: accountId,
        operation,
        request_id: requestId,
        idempotency_key: input.idempotencyKey ?? null,
        amount,
        state: 'open',
        settled: false,
        charged: 0,
        created_at: clock.now(),
        committed_at: null,
        outbox_status: 'none',
        topic: null,
        key: null,
        payload: null,
        sent_at: null,
      };
      await outbox.insertOne(doc);
      const hold = `holds.${id}`;
      const taken = await accounts.findOneAndUpdate(
        { _id: accountId, credits: { $gte: amount }, [hold]: { $exists: false } },
        { $inc: { credits: -amount }, $set: { [hold]: amount } },
        { returnDocument: 'after' },
      );
      if (!taken) {
        // No hold was taken: the reservation document is just noise now.
        await outbox.deleteOne({ _id: id, state: 'open' });
        const current = await accounts.findOne({ _id: accountId });
        throw Errors.insufficientCredits(
          amount,
          Math.max(0, (current as AccountBalanceDoc | null)?.credits ?? 0),
        );
      }

      countCredits(operation, 'reserved', amount);
      let finished = false;
      const reservation = {
        id,
        reserved: amount,
        remaining: undefined as number | undefined,
        async commit(credits: number, usage?: UsageReport) {
          assertCredits(credits, amount, 'credits');
          if (finished) return;
          finished = true;
          const remaining = await commitOpen(doc, credits, usage);
          if (credits > 0 && remaining !== null) reservation.remaining = remaining;
        },
        async release() {
          if (finished) return;
          finished = true;
          const released = await outbox.findOneAndUpdate(
            { _id: id, state: 'open' },
            { $set: { state: 'released' } },
            { returnDocument: 'after' },
          );
          if (released) {
            countCredits(operation, 'released', amount);
            await settle(released, amount);
          }
        },
      };
      return reservation;
    },

    async settleLeftover(input) {
      const { reservationId, credits, usage } = input;
      assertCredits(credits, Number.MAX_SAFE_INTEGER, 'credits');
      for (let attempt = 0; attempt < 20; attempt++) {
        const doc = await outbox.findOne({ _id: reservationId });
        if (doc?.state === 'committed') return 'committed';
        if (doc?.state === 'open') {
          if ((await commitOpen(doc, Math.min(credits, doc.amount), usage)) !== null) return 'settled';
          continue; // someone else settled it meanwhile: read what they did
        }
        // Released by recovery (or never held): the delivered items are charged afresh, once,
        // under a reservation whose id is derived from the first, so a retry finds it.
        if (credits === 0) return 'settled';
        const makeUpId = `${reservationId}:make-up`;
        const earlier = await outbox.findOne({ _id: makeUpId });
        if (earlier?.state === 'committed') return 'made_up';
        if (earlier?.state === 'open') {
          // Its maker may be between writing it and taking the hold: let it finish first; one
          // that has been open a while was left by a maker that died, and is committed here.
          if (clock.now() - earlier.created_at < MAKE_UP_SETTLE_MS) {
            await new Promise((resolve) => setTimeout(resolve, 200));
            continue;
          }
          if ((await commitOpen(earlier, Math.min(credits, earlier.amount), usage)) !== null)
            return 'made_up';
          continue;
        }
        try {
          const reservation = await ledger.reserve({
            id: makeUpId,
            accountId: input.accountId,
            operation: input.operation,
            amount: credits,
            requestId: input.requestId,
          });
          await reservation.commit(credits, usage);
          return 'made_up';
        } catch (error) {
          if (error instanceof DuplicateKeyError) continue;
          if (isAppError(error) && error.code === 'INSUFFICIENT_CREDITS') {
            logger.warn(
              { reservation_id: reservationId, credits },
              'delivered items could not be charged afresh: the balance is short',
            );
            return 'unpaid';
          }
          throw error;
        }
      }
      throw new Error(`reservation ${reservationId} kept changing while it was settled`);
    },

    async recover() {
      let settled = 0;
      let expired = 0;
      const unsettled = await outbox.find(
        { kind: 'credit_reservation', state: { $in: ['committed', 'released'] }, settled: false },
        { limit: 500 },
      );
      for (const doc of unsettled) {
        await settle(doc, doc.amount - (doc.state === 'committed' ? doc.charged : 0));
        settled += 1;
      }
      const stale = await outbox.find(
        { kind: 'credit_reservation', state: 'open', created_at: { $lt: clock.now() - reservationTtlMs } },
        { limit: 500 },
      );
      for (const doc of stale) {
        const released = await outbox.findOneAndUpdate(
          { _id: doc._id, state: 'open' },
          { $set: { state: 'released' } },
          { returnDocument: 'after' },
        );
        if (released) {
          countCredits(released.operation, 'released', released.amount);
          await settle(released, released.amount);
          expired += 1;
        }
      }
      if (settled || expired) logger.info({ settled, expired }, 'credit reservations recovered');
      return { settled, expired };
    },
  };
  return ledger;
}

/**
 * A reservation still open after CREDIT_RESERVATION_TTL_MS is taken for a dead process's and
 * refunded: one that a live request still holds (a transcription waiting
 * TRANSCRIBE_SYNC_DEADLINE_MS in the gateway, a job round JOB_ROUND_TIMEOUT_MS in the job service)
 * would be refunded under it, and its work delivered free. Each service refuses to start with a
 * lifetime that one of its own holds could outlast; `holds` names them by their variables.
 */
export function refuseReservationsShorterThan(reservationTtlMs: number, holds: Record<string, number>): void {
  const [name, longest] = Object.entries(holds).reduce((a, b) => (b[1] > a[1] ? b : a), ['', 0]);
  if (reservationTtlMs >= longest + 5_000) return;
  throw new ConfigError([
    {
      key: 'CREDIT_RESERVATION_TTL_MS',
      message: `${reservationTtlMs} ms must outlive the longest request holding credits (${longest} ms, ${name}) by at least 5 s`,
    },
  ]);
}
