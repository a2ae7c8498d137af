import { CLOUD_EVENT_KINDS } from '@subx/contracts';
import { describe, expect, it } from 'vitest';
import { ManualClock, createInMemoryDocumentStore, createInProcessEventBus } from '@subx/ports';
import type { DeliveredMessage } from '@subx/ports';
import { CREDIT_OUTBOX } from './index.ts';
import { REQUEST_OUTBOX } from './index.ts';
import { silentLogger } from '@subx/ports';
import type { OutboxEntry, OutboxSpec } from './index.ts';
import { createOutboxRelay } from './outbox-relay.ts';

/** A writer the relay has never heard of: its own collection, its own notion of "finished". */
interface JobDoc extends OutboxEntry {
  archived: boolean;
}
const JOB_OUTBOX: OutboxSpec = {
  collection: 'job_outbox',
  finished: { archived: true },
  pruneIndex: { archived: 1, created_at: 1 },
};

function entry(id: string, at: number, archived: boolean): JobDoc {
  return {
    _id: id,
    archived,
    outbox_status: 'pending',
    topic: 'jobs.v1',
    key: `k-${id}`,
    payload: Buffer.from(`payload ${id}`).toString('base64'),
    committed_at: at,
    created_at: at,
  };
}

describe('outbox relay: generic over its writers', () => {
  it("drains any writer's outbox by its spec, and prunes only what that writer calls finished", async () => {
    const clock = new ManualClock(Date.UTC(2026, 2, 15, 10));
    const store = createInMemoryDocumentStore();
    const bus = createInProcessEventBus();
    const received: DeliveredMessage[] = [];
    await bus.subscribe({
      groupId: 'reader',
      topics: ['jobs.v1'],
      fromBeginning: true,
      handler: async (m) => void received.push(m),
    });
    const jobs = store.collection<JobDoc>('job_outbox');
    await jobs.insertOne(entry('a', clock.now(), true));
    await jobs.insertOne(entry('b', clock.now() + 1, false));
    // Nothing is read from the credit collection: a relay has no default outbox.
    await store.collection<OutboxEntry>(CREDIT_OUTBOX.collection).insertOne({ ...entry('c', 0, true) });
    const relay = createOutboxRelay({
      store,
      bus,
      topic: 'jobs.v1',
      cloudEvent: CLOUD_EVENT_KINDS.creditUsage,
      clock,
      logger: silentLogger,
      outbox: JOB_OUTBOX,
    });
    await relay.init();

    expect(await relay.flush()).toBe(2);
    await expect.poll(() => received.map((m) => m.headers['x-event-id'])).toEqual(['a', 'b']);
    expect(received[0]!.key).toBe('k-a');
    // CloudEvents binary mode: the entry's event id, its key as subject; a payload without an
    // envelope is dated by its commit.
    expect(received[0]!.headers).toMatchObject({
      ce_specversion: '1.0',
      ce_id: 'a',
      ce_source: '//subx/gateway',
      ce_type: 'com.subx.credit-usage.v1',
      ce_subject: 'k-a',
      ce_time: new Date(clock.now()).toISOString(),
      ce_dataschema: 'proto:subx.events.v1.CreditUsage',
      'content-type': 'application/protobuf',
    });
    expect(Buffer.from(received[0]!.value).toString()).toBe('payload a');
    expect((await jobs.find({})).map((d) => d.outbox_status)).toEqual(['sent', 'sent']);

    clock.advance(11 * 60_000);
    expect(await relay.prune()).toBe(1); // 'a' is archived; 'b' is sent but its writer still needs it
    expect((await jobs.find({})).map((d) => d._id)).toEqual(['b']);
    expect(await store.collection(CREDIT_OUTBOX.collection).countDocuments({})).toBe(1);
    await bus.close();
  });

  it('creates the indexes of its own queries, with the keys the ledger and the request log created before', async () => {
    const store = createInMemoryDocumentStore();
    // A database from before the relay owned its indexes: the same names must carry the same keys
    // (MongoDB refuses an index of an existing name with other keys).
    const credit = store.collection(CREDIT_OUTBOX.collection);
    await credit.createIndex({ outbox_status: 1, committed_at: 1 }, { name: 'outbox_pending' });
    await credit.createIndex({ settled: 1, created_at: 1 }, { name: 'outbox_prune' });
    const requests = store.collection(REQUEST_OUTBOX.collection);
    await requests.createIndex({ outbox_status: 1, committed_at: 1 }, { name: 'outbox_pending' });
    await requests.createIndex({ outbox_status: 1, created_at: 1 }, { name: 'outbox_prune' });
    const bus = createInProcessEventBus();
    const clock = new ManualClock(0);
    for (const outbox of [CREDIT_OUTBOX, REQUEST_OUTBOX]) {
      await createOutboxRelay({
        store,
        bus,
        topic: 't',
        cloudEvent: CLOUD_EVENT_KINDS.creditUsage,
        clock,
        logger: silentLogger,
        outbox,
      }).init();
    }

    // On a fresh collection it creates both: a different definition of either name is refused.
    const fresh = store.collection(JOB_OUTBOX.collection);
    await createOutboxRelay({
      store,
      bus,
      topic: 't',
      cloudEvent: CLOUD_EVENT_KINDS.creditUsage,
      clock,
      logger: silentLogger,
      outbox: JOB_OUTBOX,
    }).init();
    await expect(fresh.createIndex({ created_at: 1 }, { name: 'outbox_pending' })).rejects.toThrow(
      /already exists/,
    );
    await expect(fresh.createIndex({ created_at: 1 }, { name: 'outbox_prune' })).rejects.toThrow(
      /already exists/,
    );
    await fresh.createIndex(JOB_OUTBOX.pruneIndex, { name: 'outbox_prune' }); // the same: a no-op
    await bus.close();
  });
});
