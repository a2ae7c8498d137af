import { describe, expect, it } from 'vitest';
import { ManualClock, createInMemoryKeyValueStore } from '@subx/ports';
import { createFlashStore } from './flash.ts';

const SESSION = 'A'.repeat(43);
const KEY = 'sxk_v1_abcdefghijklmnopqrstuvwxyz012345';

describe('flash', () => {
  it('gives a message to the same session once, stored sealed (no key in the store)', async () => {
    const writes: string[] = [];
    const kv = createInMemoryKeyValueStore({ clock: new ManualClock() });
    const set = kv.set.bind(kv);
    kv.set = async (key, value, options) => {
      writes.push(`${key}=${value}`);
      return set(key, value, options);
    };
    const flash = createFlashStore(kv);
    await flash.put(SESSION, { kind: 'ok', text: 'ready', apiKey: KEY });
    expect(writes).toHaveLength(1);
    expect(writes[0]).not.toContain(KEY);
    expect(writes[0]).not.toContain(SESSION);
    expect(await flash.take('B'.repeat(43))).toBeNull();
    expect(await flash.take(SESSION)).toEqual({ kind: 'ok', text: 'ready', apiKey: KEY });
    expect(await flash.take(SESSION)).toBeNull();
  });

  it('lasts a minute at most', async () => {
    const clock = new ManualClock();
    const flash = createFlashStore(createInMemoryKeyValueStore({ clock }));
    await flash.put(SESSION, { kind: 'ok', text: 'ready', apiKey: KEY });
    clock.advance(60_001);
    expect(await flash.take(SESSION)).toBeNull();
  });
});
