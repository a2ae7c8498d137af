import { describe, expect, it } from 'vitest';
import { AppError } from '@subx/errors';
import { KeyValueUnavailableError, ManualClock, createInMemoryKeyValueStore } from '@subx/ports';
import type { KeyValueStore } from '@subx/ports';
import { createIpRateLimiter } from './rate-limit.ts';
import { guardKeyValueStore, isStoreUnavailable } from './store-guard.ts';

/** A store whose every operation fails as an unreachable Redis does. */
function downStore(): KeyValueStore {
  const down = () => Promise.reject(new KeyValueUnavailableError('redis is not connected (reconnecting)'));
  return {
    ...createInMemoryKeyValueStore(),
    get: down,
    set: down,
    setIfAbsent: down,
    delete: down,
    ttlMs: down,
    increment: down,
    incrementWithin: down,
    publish: down,
    subscribe: down,
    ping: down,
  };
}

describe('Redis unavailable (item 3)', () => {
  it('guarded: unavailability is a retryable 503 SERVICE_UNAVAILABLE with Retry-After', async () => {
    const kv = guardKeyValueStore(downStore());
    const error = (await kv.incrementWithin('k', 1, 10).catch((e: unknown) => e)) as AppError;
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503, retryable: true });
    expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(isStoreUnavailable(error)).toBe(true);
    // Other failures are not disguised.
    const broken = guardKeyValueStore({ ...downStore(), get: () => Promise.reject(new Error('WRONGTYPE')) });
    await expect(broken.get('k')).rejects.toThrow('WRONGTYPE');
  });

  it('the per-IP limit counts in this process, per window, with a cap on addresses', async () => {
    const clock = new ManualClock(Date.UTC(2026, 2, 15, 10, 0, 0));
    const limiter = createIpRateLimiter({
      kv: guardKeyValueStore(downStore()),
      clock,
      limitPerMinute: 3,
      localFallback: true,
      maxLocalAddresses: 2,
    });
    for (let i = 0; i < 3; i++) await limiter.check('10.0.0.1');
    await expect(limiter.check('10.0.0.1')).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    await limiter.check('10.0.0.2');
    // A third address while two are held: refused until the window turns.
    await expect(limiter.check('10.0.0.3')).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    clock.advance(60_000);
    await limiter.check('10.0.0.3');
    await limiter.check('10.0.0.1');
  });

  it('without the local fallback the unavailability reaches the caller', async () => {
    const limiter = createIpRateLimiter({
      kv: guardKeyValueStore(downStore()),
      clock: new ManualClock(0),
    });
    await expect(limiter.check('10.0.0.1')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  });
});
