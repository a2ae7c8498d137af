import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.ts';
import { describeKeyValueStoreContract } from './contract.ts';
import { createInMemoryKeyValueStore } from './in-memory.ts';

describeKeyValueStoreContract('in-memory', async () => createInMemoryKeyValueStore(), {
  sharedServer: false,
});

describe('in-memory key-value store counting in process', () => {
  it('counts through plain calls on the same counters as its promises, with the same rules', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const kv = createInMemoryKeyValueStore({ clock });
    const expireAtMs = clock.now() + 1_000;
    expect(kv.inProcess.increment('n', 2, { expireAtMs })).toBe(2);
    expect(await kv.increment('n', 1)).toBe(3);
    expect(kv.inProcess.incrementWithin('n', 1, 4)).toEqual({ applied: true, value: 4 });
    expect(kv.inProcess.incrementWithin('n', 1, 4)).toEqual({ applied: false, value: 4 });
    expect(await kv.incrementWithin('n', 1, 4)).toEqual({ applied: false, value: 4 });
    expect(await kv.ttlMs('n')).toBe(1_000);
    clock.advance(1_000);
    expect(kv.inProcess.incrementWithin('n', 1, 4)).toEqual({ applied: true, value: 1 });
    await kv.set('text', 'abc');
    expect(() => kv.inProcess.increment('text', 1)).toThrow(/not an integer/);
    expect(() => kv.inProcess.increment('n', 0.5)).toThrow(/integer/);
    // A counter stepped in place reads as its string, and a plain set replaces what it counted.
    expect(await kv.get('n')).toBe('1');
    await kv.set('n', '41');
    expect(kv.inProcess.increment('n', 1)).toBe(42);
    expect(await kv.get('n')).toBe('42');
    expect(await kv.ttlMs('n')).toBeNull();
    await kv.set('n', 'forty-two');
    expect(() => kv.inProcess.incrementWithin('n', 1, 100)).toThrow(/not an integer/);
    await kv.close();
    expect(() => kv.inProcess.incrementWithin('n', 1, 4)).toThrow(/closed/);
  });
});

describe('in-memory key-value store with an injected clock', () => {
  it('expires keys when the clock passes their deadline', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const kv = createInMemoryKeyValueStore({ clock });
    await kv.set('a', '1', { ttlMs: 1_000 });
    await kv.increment('day', 1, { expireAtMs: clock.now() + 5_000 });
    clock.advance(999);
    expect(await kv.get('a')).toBe('1');
    expect(await kv.ttlMs('a')).toBe(1);
    clock.advance(1);
    expect(await kv.get('a')).toBeNull();
    expect(await kv.setIfAbsent('a', '2')).toBe(true);
    expect(await kv.ttlMs('day')).toBe(4_000);
    clock.advance(4_000);
    expect(await kv.get('day')).toBeNull();
    expect(await kv.increment('day', 1)).toBe(1);
  });

  it('lists the keys that hold a value now, expired ones left out', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const kv = createInMemoryKeyValueStore({ clock });
    expect(kv.keys()).toEqual([]);
    await kv.set('kept', '1');
    await kv.set('short', '2', { ttlMs: 1_000 });
    await kv.increment('count', 1);
    expect(kv.keys().sort()).toEqual(['count', 'kept', 'short']);
    clock.advance(1_000);
    expect(kv.keys().sort()).toEqual(['count', 'kept']);
    await kv.delete('kept');
    expect(kv.keys()).toEqual(['count']);
  });

  it('rejects increments of non-integer values', async () => {
    const kv = createInMemoryKeyValueStore();
    await kv.set('text', 'abc');
    await expect(kv.increment('text', 1)).rejects.toThrow(/not an integer/);
    await expect(kv.incrementWithin('text', 1, 10)).rejects.toThrow(/not an integer/);
  });

  it('stops working once closed', async () => {
    const kv = createInMemoryKeyValueStore();
    await kv.close();
    await expect(kv.get('a')).rejects.toThrow(/closed/);
  });
});
