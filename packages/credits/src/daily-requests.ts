/**
 * The requests counted per account and UTC day (item 8), kept in two places, both fed by
 * the same batched flush (every `flushEveryMs`, 1 s) so a request costs no database round trip:
 *
 * 1. Billing, the record the usage report reads. Each flush writes, per account and day this
 *    process counted on, its cumulative tally so far as one `subx.events.v1.RequestUsage` report
 *    into the `request_outbox` collection (one document per tally, overwritten by each flush, so
 *    the outbox holds one entry per active account and day however long Kafka is away); the outbox
 *    relay publishes it to `billing.request-usage.v1`. Billing keeps the newest report per tally
 *    (`source`, a random id, with a growing `sequence`), so a re-published or reordered report
 *    changes nothing and a lost or failed one is covered by the next.
 * 2. The `daily_requests` collection (one `$inc` upsert per account and day per flush, shared by
 *    every replica), which rebuilds the Redis daily counter after a Redis loss (`rate-limit.ts`)
 *    and answers `today_requests` then.
 *
 * What a crash loses is the last flush interval of one gateway's counts, in both.
 */
import { TOPICS } from '@subx/contracts';
import { randomUUID } from 'node:crypto';
import { requestUsageV1 } from '@subx/contracts';
import type { Clock, Doc, DocumentStore } from '@subx/ports';
import type { Logger } from '@subx/ports';
import type { Operation } from './types.ts';
import type { OutboxEntry, OutboxSpec } from './outbox.ts';
import { DAY_MS, utcDate } from './time.ts';

export const DAILY_REQUESTS_COLLECTION = 'daily_requests';
export const REQUEST_OUTBOX_COLLECTION = 'request_outbox';
export const REQUEST_USAGE_TOPIC = TOPICS.requestUsage.default;

/**
 * The request outbox for the relay: one entry per tally, rewritten by each flush; an entry has no
 * hold to settle, so it is finished once sent (the relay marks it sent only if it was not
 * rewritten meanwhile).
 */
export const REQUEST_OUTBOX: OutboxSpec = {
  collection: REQUEST_OUTBOX_COLLECTION,
  finished: { kind: 'request_usage' },
  pruneIndex: { outbox_status: 1, created_at: 1 },
};

/** One tally's latest report, waiting for (or done with) the relay. `_id` is the tally's source id. */
export interface RequestOutboxDoc extends OutboxEntry {
  kind: 'request_usage';
  account_id: string;
  date: string;
  seq: number;
  event_id: string;
}

interface DailyRequestsDoc extends Doc {
  /** `<account id>:<YYYY-MM-DD>`. */
  _id: string;
  account_id: string;
  date: string;
  count: number;
  ops: Partial<Record<Operation, number>>;
  /** Epoch ms of the last flush into it (old days can be pruned by it). */
  updated_at: number;
}

export interface DailyRequestLog {
  /** Adds `delta` (1 counted, -1 refunded) to the account's day, for one operation. */
  record(accountId: string, date: string, operation: Operation, delta: number): void;
  /** The day's count and per-operation counts: durable plus this process's not yet flushed. */
  day(accountId: string, date: string): Promise<{ count: number; ops: Partial<Record<Operation, number>> }>;
  /**
   * The day's count as written (flushed) only. What rebuilds a lost counter: deltas still pending
   * here may be requests counted after the counter was created again, which it already holds.
   */
  durableCount(accountId: string, date: string): Promise<number>;
  /** Writes the pending deltas and reports. Never throws (what failed goes out with the next flush). */
  flush(): Promise<void>;
  start(): void;
  /** Stops the timer after a last flush. */
  stop(): Promise<void>;
}

interface Pending {
  accountId: string;
  date: string;
  count: number;
  ops: Map<Operation, number>;
}

/** What this process counted for one account and day since it started (or since the tally was evicted). */
interface Tally {
  accountId: string;
  date: string;
  /** Random, never reused: billing keeps one entry per source. */
  source: string;
  seq: number;
  ops: Map<Operation, number>;
  /** Counted since the last report was written. */
  dirty: boolean;
  lastCommittedAt: number;
  touchedAt: number;
}

export function createDailyRequestLog(deps: {
  store: DocumentStore;
  clock: Clock;
  logger: Logger;
  flushEveryMs?: number;
  /** Where the reports for billing go; null: none are written (a log used only for the Redis rebuild). */
  requestUsageTopic?: string | null;
  /**
   * Tallies kept in memory (default 100,000 account-days). Past it, the least recently used
   * finished ones are dropped: a later request starts a new tally (a new source), so nothing
   * counted is lost, billing just keeps one more entry for that day.
   */
  maxTallies?: number;
}): DailyRequestLog {
  const { store, clock, logger } = deps;
  const docs = store.collection<DailyRequestsDoc>(DAILY_REQUESTS_COLLECTION);
  const outbox = store.collection<RequestOutboxDoc>(REQUEST_OUTBOX_COLLECTION);
  const topic = deps.requestUsageTopic === undefined ? REQUEST_USAGE_TOPIC : deps.requestUsageTopic;
  const flushEveryMs = deps.flushEveryMs ?? 1_000;
  const maxTallies = deps.maxTallies ?? 100_000;
  let pending = new Map<string, Pending>();
  const tallies = new Map<string, Tally>();
  let timer: ReturnType<typeof setInterval> | undefined;
  let running: Promise<void> | undefined;
  const idOf = (accountId: string, date: string) => `${accountId}:${date}`;

  /** Writes the tally's report; on failure it stays dirty and the next flush writes a newer one. */
  async function report(tally: Tally, topic: string): Promise<void> {
    tally.dirty = false;
    tally.seq += 1;
    // The relay marks an entry sent only if it is still the version it published: each report
    // of a tally gets a later committed_at.
    const committedAt = Math.max(clock.now(), tally.lastCommittedAt + 1);
    tally.lastCommittedAt = committedAt;
    const eventId = randomUUID();
    const event: requestUsageV1.RequestUsage = {
      envelope: {
        eventId,
        occurredAt: new Date(committedAt).toISOString(),
        accountId: tally.accountId,
        idempotencyKey: `${tally.source}:${tally.seq}`,
        traceParent: '',
      },
      date: tally.date,
      source: tally.source,
      sequence: BigInt(tally.seq),
      operations: [...tally.ops].map(([operation, n]) => ({ operation, requests: BigInt(Math.max(0, n)) })),
    };
    const payload = Buffer.from(requestUsageV1.RequestUsage.encode(event).finish()).toString('base64');
    try {
      await outbox.updateOne(
        { _id: tally.source },
        {
          $set: {
            seq: tally.seq,
            event_id: eventId,
            payload,
            committed_at: committedAt,
            outbox_status: 'pending',
          },
          $setOnInsert: {
            kind: 'request_usage',
            account_id: tally.accountId,
            date: tally.date,
            topic,
            key: tally.accountId,
            created_at: committedAt,
          },
        },
        { upsert: true },
      );
    } catch (err) {
      tally.dirty = true;
      logger.warn(
        { err, account_id: tally.accountId },
        'request usage report failed; the next flush sends a newer one',
      );
    }
  }

  /** Drops finished tallies of days before yesterday, then the least recently used past the cap. */
  function evict(): void {
    const yesterday = utcDate(clock.now() - DAY_MS);
    for (const [id, tally] of tallies) if (!tally.dirty && tally.date < yesterday) tallies.delete(id);
    if (tallies.size <= maxTallies) return;
    const finished = [...tallies]
      .filter(([, t]) => !t.dirty)
      .sort(([, a], [, b]) => a.touchedAt - b.touchedAt);
    for (const [id] of finished.slice(0, tallies.size - maxTallies)) tallies.delete(id);
  }

  async function writeReports(topic: string): Promise<void> {
    for (const tally of [...tallies.values()]) if (tally.dirty) await report(tally, topic);
    evict();
  }

  async function writeDurable(): Promise<void> {
    const batch = pending;
    pending = new Map();
    for (const [id, entry] of batch) {
      const inc: Record<string, number> = { count: entry.count };
      for (const [op, n] of entry.ops) inc[`ops.${op}`] = n;
      try {
        await docs.updateOne(
          { _id: id },
          {
            $inc: inc,
            $set: { updated_at: clock.now() },
            $setOnInsert: { account_id: entry.accountId, date: entry.date },
          },
          { upsert: true },
        );
      } catch (err) {
        // Keep the delta: merged back, it goes out with the next flush.
        logger.warn({ err, id }, 'daily request log: flush failed; retrying with the next one');
        const again = pending.get(id) ?? { ...entry, count: 0, ops: new Map() };
        again.count += entry.count;
        for (const [op, n] of entry.ops) again.ops.set(op, (again.ops.get(op) ?? 0) + n);
        pending.set(id, again);
      }
    }
  }

  async function flushOnce(): Promise<void> {
    // Two collections side by side: FerretDB serializes writes per collection, not across them,
    // so one after the other a flush of many account-days takes twice as long.
    await Promise.all([topic === null ? undefined : writeReports(topic), writeDurable()]);
  }

  function flush(): Promise<void> {
    running ??= flushOnce().finally(() => (running = undefined));
    return running;
  }

  return {
    record(accountId, date, operation, delta) {
      const id = idOf(accountId, date);
      let entry = pending.get(id);
      if (!entry) {
        entry = { accountId, date, count: 0, ops: new Map() };
        pending.set(id, entry);
      }
      entry.count += delta;
      entry.ops.set(operation, (entry.ops.get(operation) ?? 0) + delta);
      if (topic === null) return;
      let tally = tallies.get(id);
      if (!tally) {
        tally = {
          accountId,
          date,
          source: randomUUID(),
          seq: 0,
          ops: new Map(),
          dirty: false,
          lastCommittedAt: 0,
          touchedAt: 0,
        };
        tallies.set(id, tally);
      }
      tally.ops.set(operation, (tally.ops.get(operation) ?? 0) + delta);
      tally.dirty = true;
      tally.touchedAt = clock.now();
    },

    async day(accountId, date) {
      const id = idOf(accountId, date);
      const doc = await docs.findOne({ _id: id });
      const ops: Partial<Record<Operation, number>> = { ...doc?.ops };
      let count = doc?.count ?? 0;
      const local = pending.get(id);
      if (local) {
        count += local.count;
        for (const [op, n] of local.ops) ops[op] = (ops[op] ?? 0) + n;
      }
      return { count: Math.max(0, count), ops };
    },

    async durableCount(accountId, date) {
      return Math.max(0, (await docs.findOne({ _id: idOf(accountId, date) }))?.count ?? 0);
    },

    flush,

    start() {
      if (timer) return;
      timer = setInterval(() => void flush(), flushEveryMs);
      timer.unref?.();
    },

    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await running;
      await flush();
    },
  };
}
