import { describe, expect, it } from 'vitest';
import { describeEventBusContract } from './contract.ts';
import { createInProcessEventBus } from './in-process.ts';
import { stableHash } from './shared.ts';

describeEventBusContract('in-process', async (observer) =>
  createInProcessEventBus({ retryBackoff: { initialMs: 5, maxMs: 50 }, observer }),
);

describe('in-process event bus: a member with more work than room', () => {
  it('serves all its partitions in turn: a busy first partition does not starve the last', async () => {
    const partitions = 8;
    const bus = createInProcessEventBus({ partitions });
    try {
      // Keys of the member's first and last partitions.
      const keys = Array.from({ length: 200 }, (_, i) => `video-${i}`);
      const first = keys.find((k) => stableHash(k) % partitions === 0)!;
      const last = keys.find((k) => stableHash(k) % partitions === partitions - 1)!;
      const handled: string[] = [];
      await bus.ensureTopics(['fairness']);
      await bus.subscribe({
        groupId: 'fair',
        topics: ['fairness'],
        perPartitionConcurrency: 4,
        maxInFlight: 1,
        handler: async (m) => {
          handled.push(Buffer.from(m.value).toString());
          await new Promise((resolve) => setTimeout(resolve, 1));
        },
      });
      const message = (key: string, value: string) => ({ key, value: Buffer.from(value), headers: {} });
      await bus.publish('fairness', [
        ...Array.from({ length: 6 }, (_, i) => message(first, `first-${i}`)),
        message(last, 'last'),
      ]);
      for (let i = 0; i < 500 && handled.length < 7; i++) await new Promise((r) => setTimeout(r, 5));
      expect(handled).toHaveLength(7);
      // One slot: the last partition's message comes second, not after the first's whole backlog.
      expect(handled.indexOf('last')).toBeLessThanOrEqual(1);
    } finally {
      await bus.close();
    }
  });
});
