import { describe, expect, it } from 'vitest';
import { createJsonCache } from './cache.ts';
import { ManualClock } from './clock.ts';
import { createInMemoryKeyValueStore } from './key-value/in-memory.ts';
import { KeyValueUnavailableError } from './key-value/port.ts';
import { deferred } from '@subx/testing/wait';

const setup = () => {
  const clock = new ManualClock();
  const kv = createInMemoryKeyValueStore({ clock });
  return { clock, kv, cache: createJsonCache(kv, { prefix: 'transcripts' }) };
};

describe('createJsonCache', () => {
  it('stores JSON under the prefix with a TTL, and deletes', async () => {
    const { kv, cache, clock } = setup();
    await cache.set('v1', { lines: ['a', 'b'], n: 2 }, 1_000);
    expect(await kv.get('transcripts:v1')).toBe('{"lines":["a","b"],"n":2}');
    expect(await cache.get('v1')).toEqual({ lines: ['a', 'b'], n: 2 });
    expect(await kv.ttlMs('transcripts:v1')).toBe(1_000);
    await cache.delete('v1');
    expect(await cache.get('v1')).toBeNull();
    await cache.set('v2', 'x', 1_000);
    clock.advance(1_000);
    expect(await cache.get('v2')).toBeNull();
  });

  it('treats an unreadable entry as a miss', async () => {
    const { kv, cache } = setup();
    await kv.set('transcripts:bad', '{not json');
    expect(await cache.get('bad')).toBeNull();
  });

  it('loads on a miss, then answers from the cache until the TTL passes', async () => {
    const { cache, clock } = setup();
    let calls = 0;
    const loader = async () => ({ call: ++calls });
    expect(await cache.getOrLoad('k', 500, loader)).toEqual({ value: { call: 1 }, cached: false });
    expect(await cache.getOrLoad('k', 500, loader)).toEqual({ value: { call: 1 }, cached: true });
    clock.advance(500);
    expect(await cache.getOrLoad('k', 500, loader)).toEqual({ value: { call: 2 }, cached: false });
  });

  it('shares one loader call between concurrent misses of the same key', async () => {
    const { cache } = setup();
    const gate = deferred();
    let calls = 0;
    const loader = async () => {
      calls++;
      await gate.promise;
      return 'loaded';
    };
    const pending = Array.from({ length: 10 }, () => cache.getOrLoad('same', 1_000, loader));
    const other = cache.getOrLoad('other', 1_000, loader);
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toBe(2);
    gate.resolve();
    const results = await Promise.all(pending);
    expect(results.every((r) => r.value === 'loaded')).toBe(true);
    // handed out fresh once, to the first caller: the others received what it loaded
    expect(results.map((r) => r.cached)).toEqual([false, ...Array<boolean>(9).fill(true)]);
    expect((await other).value).toBe('loaded');
    expect(calls).toBe(2);
    expect(await cache.getOrLoad('same', 1_000, loader)).toEqual({ value: 'loaded', cached: true });
  });

  it('a caller that leaves by its signal stops waiting; the one still waiting gets the value fresh', async () => {
    const { cache } = setup();
    const gate = deferred();
    let loads = 0;
    const loader = async () => {
      loads++;
      await gate.promise;
      return 'loaded';
    };
    const starter = new AbortController();
    const first = cache.getOrLoad('k', 1_000, loader, { signal: starter.signal });
    const second = cache.getOrLoad('k', 1_000, loader, { signal: new AbortController().signal });
    await new Promise((resolve) => setImmediate(resolve));
    starter.abort(new Error('gave up'));
    await expect(first).rejects.toThrow('gave up');
    gate.resolve();
    expect(await second).toEqual({ value: 'loaded', cached: false });
    expect(loads).toBe(1);
  });

  it('aborts the load, and stores nothing, when every caller waiting on it has left', async () => {
    const { cache } = setup();
    let seen: AbortSignal | undefined;
    const loader = (signal: AbortSignal) => {
      seen = signal;
      // work that ends only when it is stopped, as an aborted download or model request does
      return new Promise<string>((_, reject) =>
        signal.addEventListener('abort', () => reject(signal.reason)),
      );
    };
    const callers = [new AbortController(), new AbortController()];
    const pending = callers.map((c) => cache.getOrLoad('k', 1_000, loader, { signal: c.signal }));
    await new Promise((resolve) => setImmediate(resolve));
    callers[0]!.abort(new Error('first left'));
    await expect(pending[0]).rejects.toThrow('first left');
    expect(seen?.aborted).toBe(false);
    callers[1]!.abort(new Error('second left'));
    await expect(pending[1]).rejects.toThrow('second left');
    expect(seen?.aborted).toBe(true);
    expect(await cache.get('k')).toBeNull();
    // the next caller starts a load of its own
    expect(await cache.getOrLoad('k', 1_000, async () => 'again')).toEqual({ value: 'again', cached: false });
  });

  it('a load that answers after its callers left is not stored', async () => {
    const { cache } = setup();
    const gate = deferred();
    const caller = new AbortController();
    const pending = cache.getOrLoad(
      'k',
      1_000,
      async () => {
        await gate.promise;
        return 'late';
      },
      { signal: caller.signal },
    );
    await new Promise((resolve) => setImmediate(resolve));
    caller.abort(new Error('left'));
    await expect(pending).rejects.toThrow('left');
    gate.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(await cache.get('k')).toBeNull();
  });

  it('forceRefresh skips the read but stores the fresh value', async () => {
    const { cache } = setup();
    await cache.set('k', 'old', 1_000);
    expect(await cache.getOrLoad('k', 1_000, async () => 'new', { forceRefresh: true })).toEqual({
      value: 'new',
      cached: false,
    });
    expect(await cache.get('k')).toBe('new');
  });

  it('propagates a loader failure to every waiter, stores nothing, and retries next time', async () => {
    const { cache } = setup();
    let calls = 0;
    const failing = async () => {
      calls++;
      throw new Error('upstream down');
    };
    const results = await Promise.allSettled([
      cache.getOrLoad('k', 1_000, failing),
      cache.getOrLoad('k', 1_000, failing),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(calls).toBe(1);
    expect(await cache.get('k')).toBeNull();
    expect(await cache.getOrLoad('k', 1_000, async () => 'ok')).toEqual({ value: 'ok', cached: false });
  });

  it('skips an unavailable store: loads and answers, stores nothing, other errors still fail', async () => {
    const { kv } = setup();
    const down = new KeyValueUnavailableError('redis is not connected (reconnecting)');
    const unavailable = { ...kv, get: () => Promise.reject(down), set: () => Promise.reject(down) };
    const cache = createJsonCache(unavailable, { prefix: 'transcripts' });
    expect(await cache.getOrLoad('k', 500, async () => ({ fresh: true }))).toEqual({
      value: { fresh: true },
      cached: false,
    });
    const broken = { ...kv, get: () => Promise.reject(new Error('WRONGTYPE')) };
    await expect(
      createJsonCache(broken, { prefix: 'transcripts' }).getOrLoad('k', 500, async () => 1),
    ).rejects.toThrow('WRONGTYPE');
  });

  describe('decodedEntries: parsed values kept while their stored text is unchanged', () => {
    const memoSetup = (decodedEntries: number, decodedMaxChars?: number) => {
      const clock = new ManualClock();
      const kv = createInMemoryKeyValueStore({ clock });
      const cache = createJsonCache(kv, {
        prefix: 't',
        decodedEntries,
        ...(decodedMaxChars === undefined ? {} : { decodedMaxChars }),
      });
      return { clock, kv, cache };
    };

    it('answers the same deep-frozen value until the entry is rewritten, here or in the store', async () => {
      const { kv, cache } = memoSetup(10);
      await cache.set('k', { segments: [{ text: 'a' }] }, 60_000);
      const first = await cache.get<{ segments: { text: string }[] }>('k');
      expect(await cache.get('k')).toBe(first);
      expect(Object.isFrozen(first)).toBe(true);
      expect(() => {
        first!.segments[0]!.text = 'changed';
      }).toThrow(TypeError);
      // a rewrite by this cache, then by anyone else (another replica writing the store)
      await cache.set('k', { segments: [{ text: 'b' }] }, 60_000);
      const second = await cache.get('k');
      expect(second).toEqual({ segments: [{ text: 'b' }] });
      expect(second).not.toBe(first);
      await kv.set('t:k', '{"segments":[{"text":"c"}]}');
      expect(await cache.get('k')).toEqual({ segments: [{ text: 'c' }] });
    });

    it('recognises an equal copy of the text (a store that answers new strings, like Redis)', async () => {
      const { kv } = memoSetup(10);
      const text = JSON.stringify({ n: 1, pad: 'x'.repeat(100) });
      const copyingStore = {
        ...kv,
        get: async (key: string) => {
          const raw = await kv.get(key);
          return raw === null ? null : [...raw].join('');
        },
      };
      const copying = createJsonCache(copyingStore, { prefix: 't', decodedEntries: 10 });
      await kv.set('t:k', text);
      expect(await copying.get('k')).toBe(await copying.get('k'));
    });

    it('misses and expiry are not hidden by the kept values', async () => {
      const { cache, clock } = memoSetup(10);
      await cache.set('k', { n: 1 }, 1_000);
      expect(await cache.get('k')).toEqual({ n: 1 });
      clock.advance(1_000);
      expect(await cache.get('k')).toBeNull();
      await cache.delete('k');
      expect(await cache.get('k')).toBeNull();
    });

    it('keeps at most decodedEntries values and decodedMaxChars characters', async () => {
      const { cache } = memoSetup(2);
      for (const k of ['a', 'b', 'c']) await cache.set(k, { k }, 60_000);
      const a = await cache.get('a');
      await cache.get('b');
      await cache.get('c');
      // 'a' was the least recently used of three: parsed again, an equal but new value
      const again = await cache.get('a');
      expect(again).toEqual(a);
      expect(again).not.toBe(a);

      const small = memoSetup(10, 50);
      await small.cache.set('big', { pad: 'x'.repeat(100) }, 60_000);
      expect(await small.cache.get('big')).not.toBe(await small.cache.get('big'));
    });

    it('without decodedEntries every read parses: callers own what they get', async () => {
      const { cache } = setup();
      await cache.set('k', { n: 1 }, 60_000);
      const value = await cache.get<{ n: number }>('k');
      expect(await cache.get('k')).not.toBe(value);
      expect(Object.isFrozen(value)).toBe(false);
    });
  });
});
