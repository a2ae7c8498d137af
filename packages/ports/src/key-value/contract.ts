import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from '@subx/testing/wait';
import type { KeyValueStore } from './port.ts';

export interface KeyValueContractOptions {
  /**
   * True when two stores from `makeStore` talk to the same server (Redis): pub/sub is then checked
   * across two clients. False for the in-memory store, whose pub/sub reaches its own subscribers
   * only: two subscribers of one instance are checked instead.
   */
  sharedServer: boolean;
}

/**
 * The KeyValueStore port's behaviour, run against one adapter. Keys carry a per-test prefix, so
 * tests sharing one server do not interfere.
 */
export function describeKeyValueStoreContract(
  name: string,
  makeStore: () => Promise<KeyValueStore>,
  { sharedServer }: KeyValueContractOptions,
): void {
  describe(`KeyValueStore contract: ${name}`, () => {
    let store: KeyValueStore;
    let extraStores: KeyValueStore[];
    let prefix: string;
    const k = (key: string): string => `${prefix}${key}`;

    beforeEach(async () => {
      store = await makeStore();
      extraStores = [];
      prefix = `t-${randomUUID()}:`;
    });

    afterEach(async () => {
      await Promise.allSettled([store, ...extraStores].map((s) => s.close()));
    });

    it('pings, gets, sets and deletes', async () => {
      await store.ping();
      expect(await store.get(k('missing'))).toBeNull();
      await store.set(k('a'), 'one');
      expect(await store.get(k('a'))).toBe('one');
      await store.set(k('a'), 'two');
      expect(await store.get(k('a'))).toBe('two');
      await store.delete(k('a'));
      expect(await store.get(k('a'))).toBeNull();
      await store.delete(k('never-set'));
      await store.set(k('unicode'), 'ü ✓ {"json":true}');
      expect(await store.get(k('unicode'))).toBe('ü ✓ {"json":true}');
    });

    it('deletes every key under a prefix, and only those; glob characters are literal', async () => {
      await store.set(k('acct_1:a'), 'x');
      await store.set(k('acct_1:b'), 'x', { ttlMs: 60_000 });
      await store.increment(k('acct_1:n'), 3);
      await store.set(k('acct_10:a'), 'other');
      await store.set(k('acct_2:a'), 'other');
      await store.set(k('glob*:a'), 'literal');
      await store.set(k('globby:a'), 'not matched by glob*');
      expect(await store.deleteByPrefix(k('acct_1:'))).toBe(3);
      expect(await store.get(k('acct_1:a'))).toBeNull();
      expect(await store.get(k('acct_1:n'))).toBeNull();
      expect(await store.get(k('acct_10:a'))).toBe('other');
      expect(await store.get(k('acct_2:a'))).toBe('other');
      expect(await store.deleteByPrefix(k('glob*'))).toBe(1);
      expect(await store.get(k('globby:a'))).toBe('not matched by glob*');
      expect(await store.deleteByPrefix(k('acct_1:'))).toBe(0);
      await expect(store.deleteByPrefix('t')).rejects.toThrow(RangeError);
    });

    it('reports time to live, and a plain set clears it', async () => {
      expect(await store.ttlMs(k('missing'))).toBeNull();
      await store.set(k('forever'), 'x');
      expect(await store.ttlMs(k('forever'))).toBeNull();
      await store.set(k('brief'), 'x', { ttlMs: 60_000 });
      const ttl = await store.ttlMs(k('brief'));
      expect(ttl).toBeGreaterThan(55_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
      await store.set(k('brief'), 'y');
      expect(await store.ttlMs(k('brief'))).toBeNull();
    });

    it('expires keys', async () => {
      await store.set(k('short'), 'x', { ttlMs: 150 });
      await store.set(k('long'), 'x', { ttlMs: 60_000 });
      expect(await store.get(k('short'))).toBe('x');
      await waitFor(async () => (await store.get(k('short'))) === null, {
        timeoutMs: 5_000,
        message: 'expiry',
      });
      expect(await store.ttlMs(k('short'))).toBeNull();
      expect(await store.get(k('long'))).toBe('x');
      expect(await store.setIfAbsent(k('short'), 'again')).toBe(true);
    });

    it('setIfAbsent lets exactly one of 20 concurrent callers win', async () => {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => store.setIfAbsent(k('lock'), `owner-${i}`, { ttlMs: 30_000 })),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      const winner = results.indexOf(true);
      expect(await store.get(k('lock'))).toBe(`owner-${winner}`);
      expect(await store.ttlMs(k('lock'))).toBeGreaterThan(25_000);
      expect(await store.setIfAbsent(k('lock'), 'late')).toBe(false);
    });

    it('increments, with an optional absolute expiry that later increments keep', async () => {
      expect(await store.increment(k('n'), 5)).toBe(5);
      expect(await store.increment(k('n'), -2)).toBe(3);
      expect(await store.ttlMs(k('n'))).toBeNull();
      const expireAtMs = Date.now() + 60_000;
      expect(await store.increment(k('n'), 1, { expireAtMs })).toBe(4);
      const ttl = await store.ttlMs(k('n'));
      expect(ttl).toBeGreaterThan(55_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
      expect(await store.increment(k('n'), 1)).toBe(5);
      expect(await store.ttlMs(k('n'))).toBeGreaterThan(55_000);
      expect(await store.get(k('n'))).toBe('5');

      const counts = await Promise.all(Array.from({ length: 50 }, () => store.increment(k('race'), 1)));
      expect(new Set(counts).size).toBe(50);
      expect(await store.get(k('race'))).toBe('50');
    });

    it('incrementWithin applies exactly up to the limit under 150 concurrent callers', async () => {
      const expireAtMs = Date.now() + 60_000;
      const results = await Promise.all(
        Array.from({ length: 150 }, () => store.incrementWithin(k('quota'), 1, 100, { expireAtMs })),
      );
      const applied = results.filter((r) => r.applied);
      expect(applied).toHaveLength(100);
      expect(applied.map((r) => r.value).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 100 }, (_, i) => i + 1),
      );
      expect(results.filter((r) => !r.applied).every((r) => r.value === 100)).toBe(true);
      expect(await store.get(k('quota'))).toBe('100');
      expect(await store.ttlMs(k('quota'))).toBeGreaterThan(55_000);
    });

    it('incrementWithin refuses a step that would cross the limit and leaves the value alone', async () => {
      expect(await store.incrementWithin(k('q'), 98, 100)).toEqual({ applied: true, value: 98 });
      expect(await store.incrementWithin(k('q'), 5, 100)).toEqual({ applied: false, value: 98 });
      expect(await store.incrementWithin(k('q'), 2, 100)).toEqual({ applied: true, value: 100 });
      expect(await store.incrementWithin(k('q'), -10, 100)).toEqual({ applied: true, value: 90 });
      expect(await store.incrementWithin(k('fresh'), 101, 100)).toEqual({ applied: false, value: 0 });
      expect(await store.get(k('fresh'))).toBeNull();
    });

    it(
      sharedServer
        ? 'publishes to subscribers on another client of the same server'
        : 'publishes to every subscriber of the instance (in-memory pub/sub is per instance)',
      async () => {
        const publisher = store;
        const subscriberStores = sharedServer ? [await makeStore(), await makeStore()] : [store, store];
        if (sharedServer) extraStores.push(...subscriberStores);
        const channel = k('events');
        const first: string[] = [];
        const second: string[] = [];
        const unsubscribeFirst = await subscriberStores[0]!.subscribe(channel, (m) => void first.push(m));
        await subscriberStores[1]!.subscribe(channel, (m) => void second.push(m));
        // Receivers are counted per store instance (one connection), not per subscription.
        expect(await publisher.publish(channel, 'key-revoked:1')).toBe(sharedServer ? 2 : 1);
        expect(await publisher.publish(k('other-channel'), 'not for us')).toBe(0);
        await waitFor(() => first.length === 1 && second.length === 1, {
          timeoutMs: 5_000,
          message: 'both subscribers',
        });
        expect(first).toEqual(['key-revoked:1']);
        expect(second).toEqual(['key-revoked:1']);

        await unsubscribeFirst();
        expect(await publisher.publish(channel, 'key-revoked:2')).toBe(1);
        await waitFor(() => second.length === 2, { timeoutMs: 5_000, message: 'the remaining subscriber' });
        expect(second).toEqual(['key-revoked:1', 'key-revoked:2']);
        expect(first).toEqual(['key-revoked:1']);
      },
    );

    it('names each instance with its own client id, the unit `publish` counts', async () => {
      const other = await makeStore();
      extraStores.push(other);
      expect(store.clientId).toMatch(/\S/);
      expect(other.clientId).not.toBe(store.clientId);
    });
  });
}
