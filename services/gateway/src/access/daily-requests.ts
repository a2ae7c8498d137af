/**
 * The durable record of requests counted per account and UTC day (issue 14 item 8). The daily
 * limit itself is checked in the KeyValueStore (Redis: one atomic step across replicas); Redis is
 * not durable, so every counted request (and every refund) is also added here, in the document
 * store, and a daily counter found empty in Redis is rebuilt from it (`rate-limit.ts`). Usage
 * reports read their request counts from here too.
 *
 * Writes are batched: deltas collect in memory and one `$inc` upsert per account and day goes out
 * every `flushEveryMs` (1 s), so a request costs no database round trip and FerretDB's serialized
 * updates see a handful of writes per second, not one per request. What a crash loses is the last
 * second of one gateway's deltas.
 */
import type { Clock, Doc, DocumentStore } from '@subx/ports';
import type { Logger } from './logger.ts';
import type { Operation } from './types.ts';

export const DAILY_REQUESTS_COLLECTION = 'daily_requests';

export interface DailyRequestsDoc extends Doc {
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
  /** Writes the pending deltas. Never throws (failed deltas are kept for the next flush). */
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

export function createDailyRequestLog(deps: {
  store: DocumentStore;
  clock: Clock;
  logger: Logger;
  flushEveryMs?: number;
}): DailyRequestLog {
  const { store, clock, logger } = deps;
  const docs = store.collection<DailyRequestsDoc>(DAILY_REQUESTS_COLLECTION);
  const flushEveryMs = deps.flushEveryMs ?? 1_000;
  let pending = new Map<string, Pending>();
  let timer: ReturnType<typeof setInterval> | undefined;
  let running: Promise<void> | undefined;
  const idOf = (accountId: string, date: string) => `${accountId}:${date}`;

  async function flushOnce(): Promise<void> {
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
