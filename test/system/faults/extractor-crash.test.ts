/**
 * End to end: the gateway and the extractor as separate processes on a real Kafka
 * broker (own topics and groups: the shared broker's other users are not disturbed). The extractor
 * is SIGKILLed (no goodbye to its consumer group) and restarted at once, then killed for good.
 * Batches must neither stall for about a minute nor end as a page of TIMEOUTs: while no worker
 * holds the jobs the gateway runs them over gRPC, and with no extractor at all it answers at once.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithEngine } from '@subx/testing/engines';
import { startSplitSystem, type SplitSystem } from './support.ts';

// The batch deadline is 60 s; before the fix these batches took all of it (items TIMEOUT).
const BOUND_MS = 25_000;

describeWithEngine('kafka', 'fault: the extractor crashes and restarts under batch traffic', (brokers) => {
  let system: SplitSystem;

  beforeAll(async () => {
    system = await startSplitSystem({ brokers, videoCount: 3, prefix: 'crashv' });
  }, 150_000);

  afterAll(async () => {
    await system?.stop();
  });

  it('killed and restarted at once: the next batch answers in seconds, every item extracted', async () => {
    await system.killExtractor();
    system.startExtractor();
    // The restarted extractor serves gRPC again quickly; its worker still has to join the group.
    const res = await system.batch(system.urls);
    expect(res.status).toBe(200);
    expect(res.ms).toBeLessThan(BOUND_MS);
    expect(system.codes(res)).toEqual(['ok', 'ok', 'ok']);
  }, 120_000);

  it('killed for good: the batch answers at once with retryable items, not after the deadline', async () => {
    await system.killExtractor();
    const res = await system.batch(system.urls);
    expect(res.ms).toBeLessThan(BOUND_MS);
    expect(res.status).toBe(200);
    expect(system.codes(res)).toEqual(['SERVICE_UNAVAILABLE', 'SERVICE_UNAVAILABLE', 'SERVICE_UNAVAILABLE']);
  }, 120_000);
});
