/**
 * Publishes pending outbox entries through the EventBus and marks each sent only after the
 * publish resolved. A bus outage therefore delays events but never loses them; a crash between
 * publish and mark re-publishes the same event id, which billing dedupes on.
 *
 * Generic: it knows the entry shape (`outbox.ts`) and nothing of who writes the entries. Each
 * writer hands it its `OutboxSpec` (collection, when an entry is finished); the relay creates the
 * indexes of its own queries (`init`).
 */
import { cloudEventHeaders, envelopeOf } from '@subx/contracts';
import type { CloudEventKind } from '@subx/contracts';
import type { Clock, DocumentStore, EventBus, Filter } from '@subx/ports';
import type { Logger } from '@subx/ports';
import type { OutboxEntry, OutboxSpec } from './outbox.ts';

export interface OutboxRelay {
  /** Creates the indexes of the relay's queries (pending by commit order, prune). Idempotent. */
  init(): Promise<void>;
  /** Publishes what is pending now; resolves with the number of entries marked sent. Never throws. */
  flush(): Promise<number>;
  /** Asks for a flush soon (after a commit) without waiting for it. */
  kick(): void;
  start(): void;
  /** Stops the timer and waits for a running flush. */
  stop(): Promise<void>;
  /** Entries committed but not yet published, and the age of the oldest (the outbox metrics). */
  backlog(): Promise<{ pending: number; oldestAgeSeconds: number }>;
  /**
   * Deletes finished entries (settled, and sent or with nothing to send) older than the retention;
   * resolves with how many. The periodic tick runs it every `pruneEveryMs`.
   */
  prune(): Promise<number>;
}

export interface OutboxRelayOptions {
  store: DocumentStore;
  bus: EventBus;
  topic: string;
  /** What the topic's events are: each message carries them as CloudEvents `ce_*` headers. */
  cloudEvent: CloudEventKind;
  clock: Clock;
  logger: Logger;
  /** The outbox this relay drains: its collection and when an entry is finished. */
  outbox: OutboxSpec;
  intervalMs?: number;
  batchSize?: number;
  /** Runs before each periodic flush (e.g. the writer's crash recovery); its failure is logged. */
  beforeTick?: () => Promise<unknown>;
  /**
   * Finished entries older than this are deleted (default 10 minutes). The relay's and the
   * recovery's queries run every tick; on FerretDB they scan the collection, so it is kept to
   * recent traffic: the idle cost no longer grows with history. The ledger of record is billing's.
   */
  retentionMs?: number;
  /** How often the tick prunes. Default 60 s. */
  pruneEveryMs?: number;
}

export function createOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { store, bus, topic, clock, logger } = options;
  const intervalMs = options.intervalMs ?? 1_000;
  const batchSize = options.batchSize ?? 100;
  const retentionMs = options.retentionMs ?? 10 * 60_000;
  const pruneEveryMs = options.pruneEveryMs ?? 60_000;
  const outbox = store.collection<OutboxEntry>(options.outbox.collection);
  const finished: Filter = options.outbox.finished;
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
        pending.map((doc) => {
          const value = Buffer.from(doc.payload ?? '', 'base64');
          const id = doc.event_id ?? doc._id;
          // The envelope's time; the commit's for a payload without one (never the publish time:
          // a re-publish must carry the same attributes).
          const time =
            envelopeOf(value)?.occurredAt || new Date(doc.committed_at ?? doc.created_at).toISOString();
          return {
            key: doc.key,
            value,
            headers: {
              ...cloudEventHeaders(options.cloudEvent, { id, time, subject: doc.key ?? '' }),
              'x-event-id': id,
            },
          };
        }),
      );
      const now = clock.now();
      for (const doc of pending) {
        const result = await outbox.updateOne(
          { _id: doc._id, outbox_status: 'pending', committed_at: doc.committed_at },
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
    if (now - lastCleanup >= pruneEveryMs) {
      lastCleanup = now;
      await prune().catch((err: unknown) => logger.warn({ err }, 'outbox relay: cleanup failed'));
    }
  }

  async function prune(): Promise<number> {
    // Only what can never be needed again: the writer says it is finished (e.g. the credit hold is
    // settled) and the event, if any, was sent. Pending events are never touched.
    const result = await outbox.deleteMany({
      ...finished,
      outbox_status: { $in: ['sent', 'none'] },
      created_at: { $lt: clock.now() - retentionMs },
    });
    return result.deletedCount;
  }

  return {
    async init() {
      await outbox.createIndex({ outbox_status: 1, committed_at: 1 }, { name: 'outbox_pending' });
      await outbox.createIndex(options.outbox.pruneIndex, { name: 'outbox_prune' });
    },
    flush,
    prune,
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
