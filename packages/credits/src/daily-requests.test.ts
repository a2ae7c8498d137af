import { describe, expect, it } from 'vitest';
import { requestUsageV1, CLOUD_EVENT_KINDS } from '@subx/contracts';
import { ManualClock, createInMemoryDocumentStore, createInProcessEventBus } from '@subx/ports';
import type { Collection, DeliveredMessage, Doc, DocumentStore } from '@subx/ports';
import {
  createDailyRequestLog,
  REQUEST_OUTBOX,
  REQUEST_OUTBOX_COLLECTION,
  REQUEST_USAGE_TOPIC,
} from './index.ts';
import type { RequestOutboxDoc } from './index.ts';
import { createOutboxRelay } from './index.ts';
import { silentLogger } from '@subx/ports';

const decode = (doc: RequestOutboxDoc) =>
  requestUsageV1.RequestUsage.decode(Buffer.from(doc.payload ?? '', 'base64'));
const opsOf = (event: requestUsageV1.RequestUsage) =>
  Object.fromEntries(event.operations.map((o) => [o.operation, Number(o.requests)]));

/** The in-memory store, with writes to one collection failing while `down.value` is true. */
function flakyStore(collection: string): { store: DocumentStore; down: { value: boolean } } {
  const inner = createInMemoryDocumentStore();
  const down = { value: false };
  const store: DocumentStore = {
    ...inner,
    collection<T extends Doc>(name: string): Collection<T> {
      const c = inner.collection<T>(name);
      if (name !== collection) return c;
      return {
        ...c,
        updateOne: (...args) => (down.value ? Promise.reject(new Error('store down')) : c.updateOne(...args)),
      };
    },
  };
  return { store, down };
}

describe('daily request log: reports for billing', () => {
  it('writes one cumulative report per account and day per flush, into one outbox entry per tally', async () => {
    const clock = new ManualClock(Date.UTC(2026, 2, 15, 10));
    const store = createInMemoryDocumentStore();
    const log = createDailyRequestLog({ store, clock, logger: silentLogger });
    const outbox = store.collection<RequestOutboxDoc>(REQUEST_OUTBOX_COLLECTION);
    for (let i = 0; i < 5; i += 1) log.record('acc-1', '2026-03-15', 'extract', 1);
    log.record('acc-1', '2026-03-15', 'batch', 1);
    log.record('acc-1', '2026-03-15', 'batch', -1); // refunded after a 5xx
    log.record('acc-2', '2026-03-15', 'summarize', 1);
    await log.flush();
    let entries = await outbox.find({}, { sort: { account_id: 1 } });
    expect(entries).toHaveLength(2);
    const first = decode(entries[0]!);
    expect(first).toMatchObject({ date: '2026-03-15', source: entries[0]!._id, sequence: 1n });
    expect(first.envelope).toMatchObject({ accountId: 'acc-1' });
    expect(opsOf(first)).toEqual({ extract: 5, batch: 0 });
    expect(entries.map((e) => e.outbox_status)).toEqual(['pending', 'pending']);

    // Nothing new: no report. More requests: the same entry carries the new total, sequence 2.
    await log.flush();
    expect(decode((await outbox.findOne({ _id: entries[0]!._id }))!).sequence).toBe(1n);
    log.record('acc-1', '2026-03-15', 'extract', 1);
    clock.advance(1_000);
    await log.flush();
    entries = await outbox.find({ account_id: 'acc-1' });
    expect(entries).toHaveLength(1);
    expect(decode(entries[0]!).sequence).toBe(2n);
    expect(opsOf(decode(entries[0]!))).toEqual({ extract: 6, batch: 0 });
    // The durable record for the Redis rebuild is written by the same flush.
    expect(await log.durableCount('acc-1', '2026-03-15')).toBe(6);
    await log.stop();
  });

  it('a failed report write is replaced by a newer one at the next flush', async () => {
    const clock = new ManualClock(Date.UTC(2026, 2, 15, 10));
    const { store, down } = flakyStore(REQUEST_OUTBOX_COLLECTION);
    const log = createDailyRequestLog({ store, clock, logger: silentLogger });
    log.record('acc-1', '2026-03-15', 'extract', 1);
    down.value = true;
    await log.flush();
    log.record('acc-1', '2026-03-15', 'extract', 1);
    await log.flush();
    down.value = false;
    await log.flush();
    const [entry] = await store.collection<RequestOutboxDoc>(REQUEST_OUTBOX_COLLECTION).find({});
    expect(opsOf(decode(entry!))).toEqual({ extract: 2 });
    expect(decode(entry!).sequence).toBe(3n);
    await log.stop();
  });

  it('the relay publishes the latest report; one rewritten while it was being published stays pending', async () => {
    const clock = new ManualClock(Date.UTC(2026, 2, 15, 10));
    const store = createInMemoryDocumentStore();
    const bus = createInProcessEventBus();
    const log = createDailyRequestLog({ store, clock, logger: silentLogger });
    const received: DeliveredMessage[] = [];
    await bus.subscribe({
      groupId: 'billing',
      topics: [REQUEST_USAGE_TOPIC],
      fromBeginning: true,
      handler: async (m) => void received.push(m),
    });
    // A bus whose publish lets the log flush a newer report in between (the race the relay guards).
    let during: (() => Promise<void>) | undefined;
    const racingBus = {
      ...bus,
      publish: async (topic: string, messages: Parameters<typeof bus.publish>[1]) => {
        await bus.publish(topic, messages);
        const run = during;
        during = undefined;
        await run?.();
      },
    };
    const relay = createOutboxRelay({
      store,
      bus: racingBus,
      topic: REQUEST_USAGE_TOPIC,
      cloudEvent: CLOUD_EVENT_KINDS.requestUsage,
      clock,
      logger: silentLogger,
      outbox: REQUEST_OUTBOX,
    });
    log.record('acc-1', '2026-03-15', 'extract', 1);
    await log.flush();
    during = async () => {
      log.record('acc-1', '2026-03-15', 'extract', 1);
      await log.flush();
    };
    expect(await relay.flush()).toBe(0); // published version 1, but version 2 is already there
    expect(await relay.flush()).toBe(1);
    await expect.poll(() => received.length).toBe(2);
    const last = requestUsageV1.RequestUsage.decode(received[1]!.value);
    expect(opsOf(last)).toEqual({ extract: 2 });
    expect(received[1]!.key).toBe('acc-1');
    expect(received[1]!.headers['x-event-id']).toBe(last.envelope!.eventId);
    // Sent and older than the retention: pruned; the next request writes a fresh entry.
    clock.advance(11 * 60_000);
    expect(await relay.prune()).toBe(1);
    await log.stop();
    await bus.close();
  });

  it('forgets finished tallies of days before yesterday and keeps at most maxTallies', async () => {
    const clock = new ManualClock(Date.UTC(2026, 2, 15, 10));
    const store = createInMemoryDocumentStore();
    const log = createDailyRequestLog({ store, clock, logger: silentLogger, maxTallies: 2 });
    const outbox = store.collection<RequestOutboxDoc>(REQUEST_OUTBOX_COLLECTION);
    log.record('acc-1', '2026-03-13', 'extract', 1);
    log.record('acc-1', '2026-03-15', 'extract', 1);
    for (const account of ['acc-2', 'acc-3']) {
      clock.advance(1);
      log.record(account, '2026-03-15', 'extract', 1);
    }
    await log.flush();
    expect(await outbox.countDocuments({})).toBe(4);
    // acc-1's tallies are gone (an old day; the least recently used), so its next request starts
    // a new source: billing keeps both, and nothing counted is lost.
    log.record('acc-1', '2026-03-15', 'extract', 1);
    await log.flush();
    const acc1 = await outbox.find({ account_id: 'acc-1', date: '2026-03-15' });
    expect(acc1.map((e) => opsOf(decode(e)).extract)).toEqual([1, 1]);
    await log.stop();
  });

  it('writes no reports without a topic (a log used only for the Redis rebuild)', async () => {
    const store = createInMemoryDocumentStore();
    const log = createDailyRequestLog({
      store,
      clock: new ManualClock(0),
      logger: silentLogger,
      requestUsageTopic: null,
    });
    log.record('acc-1', '1970-01-01', 'extract', 1);
    await log.flush();
    expect(await store.collection(REQUEST_OUTBOX_COLLECTION).countDocuments({})).toBe(0);
    expect(await log.durableCount('acc-1', '1970-01-01')).toBe(1);
  });
});
