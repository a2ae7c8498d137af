import { describe, expect, it } from 'vitest';
import { deferred } from '@subx/testing/wait';
import { AccountTurns } from './account-turns.ts';

/** Work that ends when the test says, recording when it started. */
function gated(log: string[], name: string) {
  const gate = deferred();
  return {
    work: async () => {
      log.push(name);
      await gate.promise;
    },
    finish: () => gate.resolve(),
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('AccountTurns', () => {
  it('hands a freed slot to the next account in turn, not to the one that queued most', async () => {
    const turns = new AccountTurns({ slots: 1, maxWaiting: 10, perAccount: 10 });
    const log: string[] = [];
    const running = gated(log, 'a0');
    const first = turns.run({ account: 'a' }, running.work);
    // account a queues three more, then b one: b's runs after a's first, not after all three
    const waits = ['a1', 'a2', 'a3'].map((n) => ({ n, g: gated(log, n) }));
    const b = gated(log, 'b1');
    const pending = waits.map(({ g }) => turns.run({ account: 'a' }, g.work));
    const bDone = turns.run({ account: 'b' }, b.work);
    await tick();
    expect(turns.waiting).toBe(4);
    running.finish();
    await first;
    await tick();
    waits[0]!.g.finish();
    await pending[0];
    await tick();
    expect(log).toEqual(['a0', 'a1', 'b1']);
    b.finish();
    waits[1]!.g.finish();
    waits[2]!.g.finish();
    await Promise.all([bDone, ...pending]);
    expect(log).toEqual(['a0', 'a1', 'b1', 'a2', 'a3']);
  });

  it('refuses at once (503, retryable) past the queue’s bound and an account’s share of it', async () => {
    const turns = new AccountTurns({ slots: 1, maxWaiting: 2, perAccount: 1 });
    const log: string[] = [];
    const running = gated(log, 'x');
    const first = turns.run({ account: 'a' }, running.work);
    const queuedA = turns.run({ account: 'a' }, async () => undefined);
    await expect(turns.run({ account: 'a' }, async () => undefined)).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      retryable: true,
    });
    const queuedB = turns.run({ account: 'b' }, async () => undefined);
    await expect(turns.run({ account: 'c' }, async () => undefined)).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
    });
    running.finish();
    await Promise.all([first, queuedA, queuedB]);
    expect(turns.waiting).toBe(0);
  });

  it('a wait ends when its signal aborts or its time is up, and leaves the queue', async () => {
    const turns = new AccountTurns({ slots: 1, maxWaiting: 4, perAccount: 4 });
    const log: string[] = [];
    const running = gated(log, 'x');
    const first = turns.run({ account: 'a' }, running.work);
    const leaving = new AbortController();
    const aborted = turns.run({ account: 'b', signal: leaving.signal }, async () => log.push('never'));
    const late = turns.run({ account: 'c', until: Date.now() + 50 }, async () => log.push('never'));
    leaving.abort(new Error('gone'));
    await expect(aborted).rejects.toThrow('gone');
    await expect(late).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(turns.waiting).toBe(0);
    running.finish();
    await first;
    expect(log).toEqual(['x']);
    // the slot is free again
    await turns.run({ account: 'd' }, async () => log.push('d'));
    expect(log).toEqual(['x', 'd']);
  });
});
