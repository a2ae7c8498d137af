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
  [key: string]: unknown;
}

/**
 * Per-account, per-UTC-day aggregate. `events.<event id>` marks the events already counted, and
 * the counting update is conditional on that marker being absent: one atomic single-document
 * update both counts and marks, so redelivery never double-counts (no transactions needed, which
 * FerretDB 1.x does not offer).
 */
export interface DailyAggregate {
  _id: string;
  account_id: string;
  day: string;
  requests: number;
  credits: number;
  ops: Record<string, { requests: number; credits: number }>;
  events: Record<string, 1>;
  [key: string]: unknown;
}

export interface OperationUsage {
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

export type RecordOutcome = 'recorded' | 'duplicate';

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
function safeOperation(op: string): string {
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

export async function createUsageLedger(
  store: DocumentStore,
  clock: { now(): number },
): Promise<UsageLedger> {
  const ledger: Collection<LedgerEntry> = store.collection<LedgerEntry>('usage_ledger');
  const daily: Collection<DailyAggregate> = store.collection<DailyAggregate>('usage_daily');
  await ledger.createIndex({ account_id: 1, day: 1 });
  await daily.createIndex({ account_id: 1, day: 1 });

  async function countIntoDaily(entry: LedgerEntry): Promise<void> {
    const op = safeOperation(entry.operation);
    const id = `${entry.account_id}:${entry.day}`;
    try {
      await daily.updateOne(
        { _id: id, [`events.${entry._id}`]: { $exists: false } },
        {
          $inc: {
            requests: 1,
            credits: entry.credits,
            [`ops.${op}.requests`]: 1,
            [`ops.${op}.credits`]: entry.credits,
          },
          $set: { [`events.${entry._id}`]: 1 },
          $setOnInsert: { account_id: entry.account_id, day: entry.day },
        },
        { upsert: true },
      );
    } catch (err) {
      // The upsert collides with an existing aggregate that already carries this event's
      // marker (the filter did not match it): already counted.
      if (!(err instanceof DuplicateKeyError)) throw err;
    }
  }

  return {
    async record(event) {
      validateUsageEvent(event);
      const env = event.envelope!;
      const entry: LedgerEntry = {
        _id: env.eventId,
        account_id: env.accountId,
        operation: event.operation,
        credits: Number(event.credits),
        request_id: event.requestId,
        idempotency_key: env.idempotencyKey,
        occurred_at: env.occurredAt,
        day: utcDay(env.occurredAt),
        successful_items: event.successfulItems,
        attempted_items: event.attemptedItems,
        recorded_at: new Date(clock.now()).toISOString(),
      };
      let outcome: RecordOutcome = 'recorded';
      try {
        await ledger.insertOne(entry);
      } catch (err) {
        if (!(err instanceof DuplicateKeyError)) throw err;
        outcome = 'duplicate';
      }
      // Also on a duplicate: a crash after the ledger insert but before counting is healed by
      // the redelivery, and the marker makes a second count impossible.
      await countIntoDaily(entry);
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
