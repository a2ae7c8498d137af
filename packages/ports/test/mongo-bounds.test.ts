/**
 * A MongoDB-compatible server that accepted a request and went silent must cost the caller a bounded
 * wait, and must not leave the collection's write queue stuck behind the hung write: every later
 * write of the process would wait forever (a stalled outbox relay, a billing consumer that stops).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithEngine } from '@subx/testing/engines';
import { startFreezableProxy, type FreezableProxy } from '@subx/testing/faults';
import { createMongoDocumentStore, type MongoDocumentStore } from '../src/document-store/mongo.ts';

const SOCKET_TIMEOUT_MS = 1_000;
// The timeout plus reconnect and scheduling slack on a loaded machine; the alternative is "forever".
const BOUND_MS = 8_000;

describeWithEngine('mongo', 'MongoDB document store: a server that goes silent', (url) => {
  let proxy: FreezableProxy;
  let store: MongoDocumentStore;
  beforeAll(async () => {
    // Parsed here, not while collecting: without an engine the suite is skipped with an empty url.
    proxy = await startFreezableProxy(new URL(url).host);
    store = createMongoDocumentStore({
      url: `mongodb://${proxy.address}/?directConnection=true`,
      dbName: `t_${randomUUID().replaceAll('-', '')}`,
      socketTimeoutMs: SOCKET_TIMEOUT_MS,
      connectTimeoutMs: SOCKET_TIMEOUT_MS,
      serverSelectionTimeoutMs: 2_000,
    });
  });
  afterAll(async () => {
    proxy?.thaw();
    await store?.dropDatabase().catch(() => undefined);
    await store?.close();
    await proxy?.close();
  });

  it('reads and writes fail within the bound while it is silent, and work again once it answers', async () => {
    const docs = store.collection<{ _id: string; n: number }>('counters');
    await docs.updateOne({ _id: 'c' }, { $inc: { n: 1 } }, { upsert: true });

    proxy.freeze();
    const t0 = performance.now();
    const outcomes = await Promise.allSettled([
      docs.findOne({ _id: 'c' }),
      docs.updateOne({ _id: 'c' }, { $inc: { n: 1 } }),
      docs.updateOne({ _id: 'c' }, { $inc: { n: 1 } }),
    ]);
    expect(performance.now() - t0).toBeLessThan(BOUND_MS);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);

    proxy.thaw();
    // The write queue moved on: the next write lands.
    await expect
      .poll(
        async () => {
          try {
            await docs.updateOne({ _id: 'c' }, { $inc: { n: 10 } });
            return true;
          } catch {
            return false;
          }
        },
        { timeout: 15_000, interval: 200 },
      )
      .toBe(true);
    expect((await docs.findOne({ _id: 'c' }))?.n).toBeGreaterThanOrEqual(11);
  }, 60_000);
});
