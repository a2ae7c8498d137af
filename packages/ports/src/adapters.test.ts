import { describe, expect, it } from 'vitest';
import { createAdapters } from './adapters.ts';
import { ManualClock } from './clock.ts';
import { waitFor } from '@subx/testing/wait';

describe('createAdapters without engines', () => {
  it('chooses the embedded adapters, which work together, and closes them', async () => {
    const clock = new ManualClock();
    const adapters = createAdapters({
      clientId: 'test',
      clock,
      kafkaBrokers: ' ',
      redisUrl: '',
      mongoUrl: undefined,
    });
    expect(adapters.kind).toEqual({ bus: 'in-process', store: 'in-memory', kv: 'in-memory' });
    // Nothing to wait for at start: the embedded adapters are there already.
    expect(adapters.dependencies).toEqual([]);

    await adapters.kv.set('k', 'v', { ttlMs: 10 });
    clock.advance(10);
    expect(await adapters.kv.get('k')).toBeNull();

    await adapters.store.collection('c').insertOne({ _id: 'a', n: 1 });
    expect(await adapters.store.collection('c').countDocuments({})).toBe(1);

    const got: string[] = [];
    await adapters.bus.subscribe({
      groupId: 'g',
      topics: ['t'],
      handler: async (m) => void got.push(new TextDecoder().decode(m.value)),
    });
    await adapters.bus.publish('t', [{ key: 'k', value: new TextEncoder().encode('hello') }]);
    await waitFor(() => got.length === 1);
    expect(got).toEqual(['hello']);

    await adapters.close();
    expect(await adapters.bus.isHealthy()).toBe(false);
    await expect(adapters.kv.get('k')).rejects.toThrow(/closed/);
  });
});

describe('createAdapters: the engines a service waits for', () => {
  it('names each configured engine by host and port, never with its credentials', async () => {
    const adapters = createAdapters({
      clientId: 'test',
      kafkaBrokers: '127.0.0.1:1, 127.0.0.1:2',
      mongoUrl: 'mongodb://user:s3cret@127.0.0.1:1,127.0.0.1:2/subx?authSource=admin',
      redisUrl: 'redis://:s3cret@127.0.0.1:1/0',
    });
    try {
      expect(adapters.dependencies.map(({ name, target, variable }) => ({ name, target, variable }))).toEqual(
        [
          { name: 'kafka', target: '127.0.0.1:1,127.0.0.1:2', variable: 'KAFKA_BROKERS' },
          { name: 'mongo', target: '127.0.0.1:1,127.0.0.1:2', variable: 'MONGO_URL' },
          { name: 'redis', target: '127.0.0.1:1', variable: 'REDIS_URL' },
        ],
      );
      // Nothing listens on port 1: the check fails, within the store's own command bound.
      const redis = adapters.dependencies.find((d) => d.name === 'redis')!;
      await expect(redis.check()).rejects.toThrow();
    } finally {
      await adapters.close();
    }
  });
});
