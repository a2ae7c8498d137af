import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { describeWithEngine } from '@subx/testing/engines';
import { createAdapters } from '../src/adapters.ts';
import { waitFor } from '@subx/testing/wait';

describeWithEngine('kafka', 'createAdapters with real engines', (kafkaBrokers) => {
  describeWithEngine('redis', 'with Redis', (redisUrl) => {
    describeWithEngine('mongo', 'with MongoDB', (mongoUrl) => {
      it('chooses Kafka, MongoDB and Redis and they answer', async () => {
        const mongoDb = `t_${randomUUID().replaceAll('-', '')}`;
        const adapters = createAdapters({
          clientId: 'adapters-test',
          kafkaBrokers,
          redisUrl,
          mongoUrl,
          mongoDb,
        });
        try {
          expect(adapters.kind).toEqual({ bus: 'kafka', store: 'mongo', kv: 'redis' });
          expect(await adapters.bus.isHealthy()).toBe(true);
          await adapters.store.ping();
          await adapters.kv.ping();
          // What a service waits for before it starts: every configured engine, and each answers.
          expect(adapters.dependencies.map((d) => d.name)).toEqual(['kafka', 'mongo', 'redis']);
          await Promise.all(adapters.dependencies.map((d) => d.check()));

          const topic = `t-${randomUUID()}`;
          await adapters.bus.ensureTopics([topic]);
          const got: string[] = [];
          await adapters.bus.subscribe({
            groupId: `g-${randomUUID()}`,
            topics: [topic],
            handler: async (m) => void got.push(new TextDecoder().decode(m.value)),
          });
          await adapters.bus.publish(topic, [{ key: 'k', value: new TextEncoder().encode('hello') }]);
          await waitFor(() => got.length === 1, { timeoutMs: 30_000 });
          expect(got).toEqual(['hello']);
        } finally {
          await adapters.close();
        }
        expect(await adapters.bus.isHealthy()).toBe(false);
      });
    });
  });
});
