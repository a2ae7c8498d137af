/**
 * Publishes pending outbox entries through the EventBus and marks each sent only after the
 * publish resolved. A bus outage therefore delays events but never loses them; a crash between
 * publish and mark re-publishes the same event id, which billing dedupes on.
 */
import type { Clock, DocumentStore, EventBus } from '@subx/ports';
import type { Logger } from './logger.ts';
import type { ReservationDoc } from './credits.ts';
import { OUTBOX_COLLECTION } from './credits.ts';

export interface OutboxRelay {
  /** Publishes what is pending now; resolves with the number of entries marked sent. Never throws. */
  flush(): Promise<number>;
  /** Asks for a flush soon (after a commit) without waiting for it. */
  kick(): void;
  start(): void;
  /** Stops the timer and waits for a running flush. */
  stop(): Promise<void>;
  /** Entries committed but not yet published, and the age of the oldest (the outbox metrics). */
  backlog(): Promise<{ pending: number; oldestAgeSeconds: number }>;
}

export interface OutboxRelayOptions {
  store: DocumentStore;
  bus: EventBus;
  topic: string;
  clock: Clock;
  logger: Logger;
  intervalMs?: number;
  batchSize?: number;
  collection?: string;
  /** Runs before each periodic flush (the ledger's crash recovery). */
  beforeTick?: () => Promise<unknown>;
  /** Sent entries older than this are deleted (default 7 days). */
  retentionMs?: number;
}

export function createOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { store, bus, topic, clock, logger } = options;
  const intervalMs = options.intervalMs ?? 1_000;
  const batchSize = options.batchSize ?? 100;
  const retentionMs = options.retentionMs ?? 7 * 86_400_000;
  const outbox = store.collection<ReservationDoc>(options.collection ?? OUTBOX_COLLECTION);
  let running: Promise<number> | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  let kicked = false;
  let lastCleanup = 0;

  async function flushOnce(): Promise<number> {
    let sent = 0;
    for (;;) {
      const pending = await outbox.find(
        { outbox_status: 'pending', topic },
        { sort: { committed_at: 1 }, limit: batchSize },
      );
      if (pending.length === 0) break;
      await bus.publish(
        topic,
        pending.map((doc) => ({
          key: doc.key,
          value: Buffer.from(doc.payload ?? '', 'base64'),
          headers: { 'x-event-id': doc._id },
        })),
      );
      const now = clock.now();
      for (const doc of pending) {
        const result = await outbox.updateOne(
          { _id: doc._id, outbox_status: 'pending' },
          { $set: { outbox_status: 'sent', sent_at: now } },
        );
        sent += result.modifiedCount;
      }
      if (pending.length < batchSize) break;
    }
    return sent;
  }

  async function flush(): Promise<number> {
    // Serialized: entries written after a running pass started are picked up by the next pass.
    while (running) await running;
    running = flushOnce()
      .catch((err: unknown) => {
        logger.warn({ err, topic }, 'outbox relay: publish failed; events stay pending');
        return 0;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  }

  let ticking = false;
  async function tick(): Promise<void> {
    if (ticking) return;
    ticking = true;
    try {
      await tickOnce();
    } finally {
      ticking = false;
    }
  }

  async function tickOnce(): Promise<void> {
    try {
      await options.beforeTick?.();
    } catch (err) {
      logger.warn({ err }, 'outbox relay: recovery step failed');
    }
    await flush();
    const now = clock.now();
    if (now - lastCleanup > 3_600_000) {
      lastCleanup = now;
      await outbox
        .deleteMany({ outbox_status: 'sent', sent_at: { $lt: now - retentionMs } })
        .catch((err: unknown) => logger.warn({ err }, 'outbox relay: cleanup failed'));
    }
  }

  return {
    flush,
    kick() {
      if (kicked || !timer) return;
      kicked = true;
      setImmediate(() => {
        kicked = false;
        void flush();
      });
    },
    async backlog() {
      const filter = { outbox_status: 'pending', topic };
      const pending = await outbox.countDocuments(filter);
      if (pending === 0) return { pending, oldestAgeSeconds: 0 };
      const [oldest] = await outbox.find(filter, { sort: { committed_at: 1 }, limit: 1 });
      const committedAt = oldest?.committed_at ?? clock.now();
      return { pending, oldestAgeSeconds: Math.max(0, (clock.now() - committedAt) / 1000) };
    },
    start() {
      if (timer) return;
      timer = setInterval(() => void tick(), intervalMs);
      timer.unref?.();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      if (running) await running;
    },
  };
}
