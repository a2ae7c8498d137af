import { describe, expect, it } from 'vitest';
import { CRASHED, deliver, type Delivery } from './delivery.ts';
import { RetryableError, type BusMessage, type DeliveredMessage } from './port.ts';

/** A delivery whose handler answers from `script` (one entry per attempt) and records everything. */
function scripted(script: unknown[], overrides: Partial<Delivery> = {}) {
  const attempts: DeliveredMessage[] = [];
  const deadLetters: BusMessage[] = [];
  const backoffs: number[] = [];
  const failures: number[] = [];
  const handled: string[] = [];
  const delivery: Delivery = {
    topic: 'jobs',
    partition: 2,
    offset: '41',
    groupId: 'workers',
    key: 'k',
    value: new TextEncoder().encode('v'),
    headers: { 'x-trace': 't' },
    maxAttempts: 3,
    retryBackoff: { initialMs: 100, maxMs: 250 },
    observer: {
      handled: (_topic, _group, outcome) => handled.push(outcome),
      deadLettered: () => handled.push('dead-lettered'),
    },
    runHandler: async (message) => {
      attempts.push(message);
      return script[attempts.length - 1] ?? null;
    },
    publishDeadLetter: (message) => {
      deadLetters.push(message);
    },
    waitBackoff: async (ms) => {
      backoffs.push(ms);
      return 'done';
    },
    onFailure: (_error, attempt) => failures.push(attempt),
    ...overrides,
  };
  return { delivery, attempts, deadLetters, backoffs, failures, handled };
}

describe('deliver (one message, shared by both buses)', () => {
  it('hands the handler a copy of the message with its attempt number', async () => {
    const run = scripted([new Error('once'), null]);
    expect(await deliver(run.delivery)).toBe('handled');
    expect(run.attempts.map((a) => a.attempt)).toEqual([1, 2]);
    expect(run.attempts[0]).toMatchObject({ topic: 'jobs', partition: 2, offset: '41', key: 'k' });
    expect(run.attempts[0]!.value).not.toBe(run.delivery.value);
    expect(run.handled).toEqual(['failed', 'ok']);
    expect(run.failures).toEqual([1]);
    expect(run.backoffs).toEqual([100]);
  });

  it('dead-letters after maxAttempts counted failures, with where it came from and why', async () => {
    const run = scripted([new Error('a'), new Error('b'), new Error('c'), null]);
    expect(await deliver(run.delivery)).toBe('dead-lettered');
    expect(run.attempts).toHaveLength(3);
    expect(run.backoffs).toEqual([100, 200]);
    expect(run.handled).toEqual(['failed', 'failed', 'failed', 'dead-lettered']);
    expect(run.deadLetters).toEqual([
      {
        key: 'k',
        value: run.delivery.value,
        headers: {
          'x-trace': 't',
          'x-error-message': 'c',
          'x-original-topic': 'jobs',
          'x-original-partition': '2',
          'x-original-offset': '41',
        },
      },
    ]);
  });

  it('retries a RetryableError without counting it towards the dead letter', async () => {
    const retry = new RetryableError('later');
    const run = scripted([retry, retry, retry, new Error('x'), null]);
    expect(await deliver(run.delivery)).toBe('handled');
    expect(run.handled).toEqual(['retry', 'retry', 'retry', 'failed', 'ok']);
    expect(run.failures).toEqual([4]);
    expect(run.backoffs).toEqual([100, 200, 250, 250]);
  });

  it('ends where the member lets go: a crash, a backoff given up, the partition gone', async () => {
    expect(await deliver(scripted([CRASHED]).delivery)).toBe('crashed');
    const interrupted = scripted([new Error('x')], { waitBackoff: async () => 'interrupted' });
    expect(await deliver(interrupted.delivery)).toBe('interrupted');
    const crashedInBackoff = scripted([new Error('x')], { waitBackoff: async () => 'crashed' });
    expect(await deliver(crashedInBackoff.delivery)).toBe('crashed');
    const gone = scripted([null], { stillOwned: () => false });
    expect(await deliver(gone.delivery)).toBe('interrupted');
    expect(gone.attempts).toEqual([]);
  });

  it('fails when the dead letter cannot be published, so the message is not committed', async () => {
    const run = scripted([new Error('a')], {
      maxAttempts: 1,
      publishDeadLetter: async () => {
        throw new Error('bus down');
      },
    });
    await expect(deliver(run.delivery)).rejects.toThrow('bus down');
  });
});
