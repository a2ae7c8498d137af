import type { Collection, DocumentStore } from '@subx/ports';
import { DuplicateKeyError } from '@subx/ports';
import type { creditUsageV1 } from '@subx/contracts';

type CreditUsage = creditUsageV1.CreditUsage;

/** One ledger line per credit-usage event; `_id` is the event id, so redelivery cannot add a line twice. */
export interface LedgerEntry {
  _id: string;
  account_id: string;
  operation: string;
  credits: number;
  request_id: string;
  idempotency_key: string;
  occurred_at: string;
  /** YYYY-MM-DD (UTC) of occurred_at. */
  day: string;
  successful_items: number;
  attempted_items: number;
  recorded_at: string;
  /** True once the entry is in its day's aggregate; set after the aggregate update. */
  counted: boolean;
  [key: string]: unknown;
}

/**
 * Per-account, per-UTC-day aggregate. The counting update is conditional on the marker
 * `pending.<event id>` being absent and sets it: one atomic single-document update both counts and
 * marks, so a redelivered event can never be counted twice (no transactions needed, which
 * FerretDB 1.x does not offer). Markers are pruned once older than the grace period, and only
 * after the ledger entry says `counted: true` — from then on the ledger entry is what stops a
 * redelivery — so the document stays small however many events a day has.
 */
export interface DailyAggregate {
  _id: string;
  account_id: string;
  day: string;
  requests: number;
  credits: number;
  ops: Record<string, { requests: number; credits: number }>;
  /** event id → when it was counted (ms since the epoch). */
  pending: Record<string, number>;
  [key: string]: unknown;
}

interface OperationUsage {
  operation: string;
  requests: number;
  credits: number;
}

export interface DayUsage {
  date: string;
  requests: number;
  credits: number;
  operations: OperationUsage[];
}

export interface UsageReport {
  accountId: string;
  days: DayUsage[];
  totalRequests: number;
  totalCredits: number;
}

type RecordOutcome = 'recorded' | 'duplicate';

const DAY = /^\d{4}-\d{2}-\d{2}$/;

export class InvalidUsageEventError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidUsageEventError';
  }
}

function utcDay(iso: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new InvalidUsageEventError(`occurred_at is not a timestamp: ${iso}`);
  return new Date(ms).toISOString().slice(0, 10);
}

/** Operation names become field names: keep them to a safe alphabet. */
export function safeOperation(op: string): string {
  if (!/^[a-z][a-z0-9_]{0,40}$/.test(op)) throw new InvalidUsageEventError(`bad operation name: ${op}`);
  return op;
}

export function validateUsageEvent(event: CreditUsage): void {
  const env = event.envelope;
  if (!env?.eventId) throw new InvalidUsageEventError('envelope.event_id is missing');
  if (!/^[A-Za-z0-9-]{8,64}$/.test(env.eventId))
    throw new InvalidUsageEventError('envelope.event_id is malformed');
  if (!env.accountId) throw new InvalidUsageEventError('envelope.account_id is missing');
  if (event.credits < 0n) throw new InvalidUsageEventError('credits is negative');
  safeOperation(event.operation);
  utcDay(env.occurredAt);
}

export interface UsageLedger {
  /** Idempotent: the same event id is recorded and counted once, however often it arrives. */
  record(event: CreditUsage): Promise<RecordOutcome>;
  usage(accountId: string, fromDay: string, toDay: string): Promise<UsageReport>;
  /** Sum of credits in the append-only ledger (reconciliation). */
  ledgerTotal(accountId: string): Promise<{ credits: number; entries: number }>;
}

export interface UsageLedgerOptions {
  /**
   * How long a counted event's marker stays on its aggregate (default 1 h). A second delivery of
   * the same event that read the ledger entry before it was marked counted, and reaches the
   * aggregate only after the marker is gone, would count twice: the grace period must outlast
   * any such overlap (a consumer that lost its partition mid-message finishes within seconds).
   */
  markerGraceMs?: number;
  /**
   * The id an event's account is recorded under: a deleted workspace's pseudonym
   * (pseudonyms.ts); default the account id itself.
   */
  accountOf?: (accountId: string) => Promise<string>;
}

export async function createUsageLedger(
  store: DocumentStore,
  clock: { now(): number },
  options: UsageLedgerOptions = {},
): Promise<UsageLedger> {
  const graceMs = options.markerGraceMs ?? 60 * 60_000;
  const ledger: Collection<LedgerEntry> = store.collection<LedgerEntry>('usage_ledger');
  const daily: Collection<DailyAggregate> = store.collection<DailyAggregate>('usage_daily');
  await ledger.createIndex({ account_id: 1, day: 1 });
  await daily.createIndex({ account_id: 1, day: 1 });

  /** Counts the entry into its day unless its marker is there; returns the aggregate after. */
  async function countIntoDaily(entry: LedgerEntry): Promise<DailyAggregate | null> {
    const op = safeOperation(entry.operation);
    const id = `${entry.account_id}:${entry.day}`;
    try {
      return await daily.findOneAndUpdate(
        { _id: id, [`pending.${entry._id}`]: { $exists: false } },
        {
          $inc: {
            requests: 1,
            credits: entry.credits,
            [`ops.${op}.requests`]: 1,
            [`ops.${op}.credits`]: entry.credits,
          },
          $set: { [`pending.${entry._id}`]: clock.now() },
          $setOnInsert: { account_id: entry.account_id, day: entry.day },
        },
        { upsert: true, returnDocument: 'after' },
      );
    } catch (err) {
      // The upsert collides with the existing aggregate that already carries this event's
      // marker (the filter did not match it): already counted.
      if (!(err instanceof DuplicateKeyError)) throw err;
      return null;
    }
  }

  /** Drops markers past the grace period; each one's ledger entry is marked counted first. */
  async function pruneMarkers(aggregate: DailyAggregate): Promise<void> {
    const cutoff = clock.now() - graceMs;
    const stale = Object.entries(aggregate.pending ?? {})
      .filter(([, at]) => typeof at === 'number' && at < cutoff)
      .map(([eventId]) => eventId);
    if (stale.length === 0) return;
    for (const eventId of stale) await ledger.updateOne({ _id: eventId }, { $set: { counted: true } });
    await daily.updateOne(
      { _id: aggregate._id },
      { $unset: Object.fromEntries(stale.map((eventId) => [`pending.${eventId}`, ''] as const)) },
    );
  }

  return {
    async record(event) {
      validateUsageEvent(event);
      const env = event.envelope!;
      const entry: LedgerEntry = {
        _id: env.eventId,
        account_id: options.accountOf ? await options.accountOf(env.accountId) : env.accountId,
        operation: event.operation,
        credits: Number(event.credits),
        request_id: event.requestId,
        idempotency_key: env.idempotencyKey,
        occurred_at: env.occurredAt,
        day: utcDay(env.occurredAt),
        successful_items: event.successfulItems,
        attempted_items: event.attemptedItems,
        recorded_at: new Date(clock.now()).toISOString(),
        counted: false,
      };
      let outcome: RecordOutcome = 'recorded';
      try {
        await ledger.insertOne(entry);
      } catch (err) {
        if (!(err instanceof DuplicateKeyError)) throw err;
        outcome = 'duplicate';
        const existing = await ledger.findOne({ _id: entry._id });
        if (existing?.counted) return outcome;
        // Counted where the first delivery put it (its account id may have been pseudonymised since).
        if (existing) entry.account_id = existing.account_id;
        // Otherwise an earlier delivery stopped between the ledger insert and the count (or is
        // counting right now): the count below is conditional on the marker, so it is safe.
      }
      const aggregate = await countIntoDaily(entry);
      await ledger.updateOne({ _id: entry._id }, { $set: { counted: true } });
      if (aggregate) await pruneMarkers(aggregate);
      return outcome;
    },

    async usage(accountId, fromDay, toDay) {
      if (!DAY.test(fromDay) || !DAY.test(toDay))
        throw new InvalidUsageEventError('dates must be YYYY-MM-DD');
      const docs = await daily.find(
        { account_id: accountId, day: { $gte: fromDay, $lte: toDay } },
        { sort: { day: 1 } },
      );
      const days: DayUsage[] = docs.map((d) => ({
        date: d.day,
        requests: d.requests ?? 0,
        credits: d.credits ?? 0,
        operations: Object.entries(d.ops ?? {})
          .map(([operation, u]) => ({ operation, requests: u.requests ?? 0, credits: u.credits ?? 0 }))
          .sort((a, b) => a.operation.localeCompare(b.operation)),
      }));
      return {
        accountId,
        days,
        totalRequests: days.reduce((s, d) => s + d.requests, 0),
        totalCredits: days.reduce((s, d) => s + d.credits, 0),
      };
    },

    async ledgerTotal(accountId) {
      const entries = await ledger.find({ account_id: accountId });
      return { credits: entries.reduce((s, e) => s + e.credits, 0), entries: entries.length };
    },
  };
}
