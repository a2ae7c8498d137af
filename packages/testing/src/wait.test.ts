import { connect, createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from './free-port.ts';
import { deferred, waitFor } from './wait.ts';

describe('waitFor', () => {
  it('resolves as soon as the condition holds, sync or async', async () => {
    let polls = 0;
    await waitFor(() => ++polls === 3, { intervalMs: 1 });
    expect(polls).toBe(3);
    await waitFor(async () => Promise.resolve(true));
  });

  it('fails after the bound, naming what it waited for (a function is read at the timeout)', async () => {
    const started = Date.now();
    await expect(waitFor(() => false, { timeoutMs: 50, message: 'the moon' })).rejects.toThrow(
      'timed out after 50 ms waiting for the moon',
    );
    expect(Date.now() - started).toBeLessThan(1_000);
    let last = 0;
    await expect(
      waitFor(() => ++last < 0, { timeoutMs: 20, intervalMs: 1, message: () => `a negative, last ${last}` }),
    ).rejects.toThrow(/waiting for a negative, last [1-9]\d*/);
  });

  it('passes on an error the condition throws', async () => {
    await expect(
      waitFor(() => {
        throw new Error('broken probe');
      }),
    ).rejects.toThrow('broken probe');
  });
});

describe('deferred', () => {
  it('settles when the test says so', async () => {
    const done = deferred<string>();
    setTimeout(() => done.resolve('now'), 1);
    await expect(done.promise).resolves.toBe('now');
    const failed = deferred();
    failed.reject(new Error('no'));
    await expect(failed.promise).rejects.toThrow('no');
  });
});

describe('freePort', () => {
  it('returns a loopback port nothing listens on, which a server can then bind', async () => {
    const port = await freePort();
    expect(port).toBeGreaterThan(0);
    const refused = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(false)));
      socket.once('error', () => resolve(true));
    });
    expect(refused).toBe(true);
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    await new Promise((resolve) => server.close(resolve));
  });
});
