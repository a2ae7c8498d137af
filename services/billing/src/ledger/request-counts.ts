import type { Collection, DocumentStore } from '@subx/ports';
import { DuplicateKeyError } from '@subx/ports';
import type { requestUsageV1 } from '@subx/contracts';
import { InvalidUsageEventError, safeOperation } from './usage-ledger.ts';

type RequestUsage = requestUsageV1.RequestUsage;

/** One source's latest report: its sequence and cumulative requests per operation. */
export interface SourceTally {
  seq: number;
  ops: Record<string, number>;
  /** Epoch ms when this report was applied (diagnostics). */
  at: number;
}

/**
 * Requests per account and UTC day, from billing.request-usage.v1. Each gateway process reports
 * its own cumulative tally (`source`) with a growing sequence; the document keeps the latest
 * report per source and the day's count is their sum. Applying a report is ONE conditional
 * single-document update (`src.<source>.seq < sequence`), so redelivery, re-publishing after a
 * crash and reordering can never count twice, with no window of remembered event ids to outlast:
 * an older report is simply not newer than what is stored.
 */
export interface RequestDaily {
  /** `<account>:<YYYY-MM-DD>`. */
  _id: string;
  account_id: string;
  day: string;
  /** source id → its latest report. One entry per gateway process that served the account that day. */
  src: Record<string, SourceTally>;
  [key: string]: unknown;
}

export type ApplyOutcome = 'applied' | 'stale';

export interface RequestCounts {
  /** Idempotent and order-insensitive: only a report newer than its source's stored one changes anything. */
  apply(event: RequestUsage): Promise<ApplyOutcome>;
  /** Requests per day and operation over the inclusive range; days without requests are absent. */
  days(accountId: string, fromDay: string, toDay: string): Promise<Map<string, Map<string, number>>>;
}

export const REQUEST_COUNTS_COLLECTION = 'usage_requests_daily';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const SOURCE = /^[A-Za-z0-9-]{8,64}$/;

export function validateRequestUsageEvent(event: RequestUsage): void {
  const env = event.envelope;
  if (!env?.eventId) throw new InvalidUsageEventError('envelope.event_id is missing');
  if (!env.accountId) throw new InvalidUsageEventError('envelope.account_id is missing');
  if (!DAY.test(event.date) || Number.isNaN(Date.parse(event.date)))
    throw new InvalidUsageEventError(`date is not YYYY-MM-DD: ${event.date}`);
  // The source becomes a field name: a safe alphabet, no dots or dollars.
  if (!SOURCE.test(event.source)) throw new InvalidUsageEventError('source is missing or malformed');
  if (event.sequence <= 0n || event.sequence > BigInt(Number.MAX_SAFE_INTEGER))
    throw new InvalidUsageEventError('sequence must be a positive safe integer');
  const seen = new Set<string>();
  for (const op of event.operations) {
    safeOperation(op.operation);
    if (seen.has(op.operation)) throw new InvalidUsageEventError(`operation ${op.operation} twice`);
    seen.add(op.operation);
    if (op.requests < 0n || op.requests > BigInt(Number.MAX_SAFE_INTEGER))
      throw new InvalidUsageEventError(`requests of ${op.operation} must be a non-negative safe integer`);
  }
}

export async function createRequestCounts(
  store: DocumentStore,
  clock: { now(): number },
  /** The id a report's account is recorded under (a deleted workspace's pseudonym, pseudonyms.ts). */
  accountOf: (accountId: string) => Promise<string> = async (accountId) => accountId,
): Promise<RequestCounts> {
  const daily: Collection<RequestDaily> = store.collection<RequestDaily>(REQUEST_COUNTS_COLLECTION);
  await daily.createIndex({ account_id: 1, day: 1 });

  return {
    async apply(event) {
      validateRequestUsageEvent(event);
      const accountId = await accountOf(event.envelope!.accountId);
      const id = `${accountId}:${event.date}`;
      const path = `src.${event.source}`;
      const seq = Number(event.sequence);
      const tally: SourceTally = {
        seq,
        ops: Object.fromEntries(event.operations.map((o) => [o.operation, Number(o.requests)])),
        at: clock.now(),
      };
      // The usual case: a known source reports again. Matches only if this report is newer.
      const newer = () =>
        daily.updateOne({ _id: id, [`${path}.seq`]: { $lt: seq } }, { $set: { [path]: tally } });
      if ((await newer()).matchedCount === 1) return 'applied';
      try {
        // The source's first report (the day's document may not exist yet).
        await daily.updateOne(
          { _id: id, [path]: { $exists: false } },
          { $set: { [path]: tally }, $setOnInsert: { account_id: accountId, day: event.date } },
          { upsert: true },
        );
        return 'applied';
      } catch (err) {
        // The document exists and already has this source: stored by an equal or newer report,
        // or by a concurrent delivery since the first try, which the second try settles.
        if (!(err instanceof DuplicateKeyError)) throw err;
      }
      return (await newer()).matchedCount === 1 ? 'applied' : 'stale';
    },

    async days(accountId, fromDay, toDay) {
      if (!DAY.test(fromDay) || !DAY.test(toDay))
        throw new InvalidUsageEventError('dates must be YYYY-MM-DD');
      const docs = await daily.find(
        { account_id: accountId, day: { $gte: fromDay, $lte: toDay } },
        { sort: { day: 1 } },
      );
      const out = new Map<string, Map<string, number>>();
      for (const doc of docs) {
        const ops = new Map<string, number>();
        for (const tally of Object.values(doc.src ?? {})) {
          for (const [op, n] of Object.entries(tally?.ops ?? {})) {
            if (typeof n === 'number' && n > 0) ops.set(op, (ops.get(op) ?? 0) + n);
          }
        }
        if (ops.size > 0) out.set(doc.day, ops);
      }
      return out;
    },
  };
}
