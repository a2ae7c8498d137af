import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisServerAvailable, startOwnRedis, type OwnRedis } from '@subx/testing/faults';
import { KeyValueUnavailableError, type KeyValueStore } from '../src/key-value/port.ts';
import { createRedisKeyValueStore } from '../src/key-value/redis.ts';

// A frozen or dead Redis must cost each command a bounded wait and a
// typed, retryable failure, never a hang. The suite runs its own redis-server (it freezes it).
// Throws under CI when redis-server is missing: there the suite runs, never skips.
const available = redisServerAvailable();

const COMMAND_TIMEOUT_MS = 300;
// Generous for a loaded machine; the point is "bounded", versus "forever".
const BOUND_MS = 3_000;

async function timed<T>(operation: () => Promise<T>): Promise<{ ms: number; error: unknown }> {
  const t0 = performance.now();
  try {
    await operation();
    return { ms: performance.now() - t0, error: null };
  } catch (error) {
    return { ms: performance.now() - t0, error };
  }
}

describe.skipIf(!available)('Redis key-value store: bounded when Redis misbehaves', () => {
  let redis: OwnRedis;
  let kv: KeyValueStore;

  beforeAll(async () => {
    redis = await startOwnRedis();
    kv = createRedisKeyValueStore({ url: redis.url, commandTimeoutMs: COMMAND_TIMEOUT_MS });
    await kv.set('warm', '1');
  });
  afterAll(async () => {
    redis?.thaw();
    await kv?.close();
    await redis?.stop();
  });

  it('a frozen server: every command and ping fail with KeyValueUnavailableError within the timeout', async () => {
    redis.freeze();
    try {
      const results = await Promise.all([
        timed(() => kv.get('warm')),
        timed(() => kv.incrementWithin('rl', 1, 10)),
        timed(() => kv.ping()),
        timed(() => kv.set('x', 'y', { ttlMs: 1_000 })),
      ]);
      for (const { ms, error } of results) {
        expect(error).toBeInstanceOf(KeyValueUnavailableError);
        expect(ms).toBeLessThan(BOUND_MS);
      }
    } finally {
      redis.thaw();
    }
    // The connection survives the freeze: served again once thawed.
    await expect.poll(() => kv.get('warm').catch(() => 'unavailable'), { timeout: 10_000 }).toBe('1');
  });

  it('a dead server: commands fail at once (no queueing behind reconnects); back after a restart', async () => {
    await redis.kill();
    // Let the client notice the closed connection.
    await expect
      .poll(async () => (await timed(() => kv.get('warm'))).error instanceof KeyValueUnavailableError, {
        timeout: 5_000,
      })
      .toBe(true);
    const burst = await Promise.all(Array.from({ length: 200 }, () => timed(() => kv.increment('n', 1))));
    for (const { ms, error } of burst) {
      expect(error).toBeInstanceOf(KeyValueUnavailableError);
      expect(ms).toBeLessThan(BOUND_MS);
    }
    await redis.start();
    await expect
      .poll(
        () =>
          kv.ping().then(
            () => 'up',
            () => 'down',
          ),
        { timeout: 10_000 },
      )
      .toBe('up');
    expect(await kv.increment('n', 1)).toBe(1);
  });

  it('a subscription hears of its lost connection and of its return, and receives again after it', async () => {
    const publisher = createRedisKeyValueStore({ url: redis.url, commandTimeoutMs: COMMAND_TIMEOUT_MS });
    const states: boolean[] = [];
    const received: string[] = [];
    const unsubscribe = await kv.subscribe('news', (message) => void received.push(message), {
      onConnection: (live) => void states.push(live),
    });
    try {
      expect(await publisher.publish('news', 'before')).toBe(1);
      await expect.poll(() => received).toEqual(['before']);
      await redis.kill();
      await expect.poll(() => states, { timeout: 5_000 }).toEqual([false]);
      await redis.start();
      await expect.poll(() => states, { timeout: 15_000 }).toEqual([false, true]);
      // "Live" is said once Redis confirmed the subscription: the first message published after it arrives.
      await expect
        .poll(() => publisher.publish('news', 'after').catch(() => -1), { timeout: 10_000 })
        .toBe(1);
      await expect.poll(() => received).toEqual(['before', 'after']);
    } finally {
      await unsubscribe();
      await publisher.close();
    }
  });

  it('never connected: commands wait at most the command timeout, and the queue is bounded', async () => {
    const nobody = createRedisKeyValueStore({
      url: 'redis://127.0.0.1:1',
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
      maxQueued: 5,
    });
    try {
      const results = await Promise.all(Array.from({ length: 20 }, () => timed(() => nobody.get('k'))));
      for (const { ms, error } of results) {
        expect(error).toBeInstanceOf(KeyValueUnavailableError);
        expect(ms).toBeLessThan(BOUND_MS);
      }
    } finally {
      await nobody.close();
    }
  });

  it('Redis error replies are not mistaken for unavailability', async () => {
    await kv.set('text', 'not a number');
    await expect(kv.increment('text', 1)).rejects.not.toBeInstanceOf(KeyValueUnavailableError);
  });
});
