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
