import { describe, expect, it, vi } from 'vitest';
import { withTimeout } from './timeout.ts';

describe('withTimeout', () => {
  it('returns the work when it settles first, and leaves no timer behind', async () => {
    vi.useFakeTimers();
    try {
      const onTimeout = vi.fn(() => 'late');
      await expect(withTimeout(() => Promise.resolve('done'), 1_000, onTimeout)).resolves.toBe('done');
      expect(vi.getTimerCount()).toBe(0);
      expect(onTimeout).not.toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
    }
  });

  it("returns onTimeout()'s value once the time is up", async () => {
    vi.useFakeTimers();
    try {
      const never = new Promise<string>(() => {});
      const raced = withTimeout(
        () => never,
        500,
        () => 'timed out',
      );
      await vi.advanceTimersByTimeAsync(499);
      let settled = false;
      void raced.then(() => (settled = true));
      await Promise.resolve();
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await expect(raced).resolves.toBe('timed out');
    } finally {
      vi.useRealTimers();
    }
  });

  it('passes a rejection of the work through', async () => {
    await expect(
      withTimeout(
        () => Promise.reject(new Error('boom')),
        1_000,
        () => 'late',
      ),
    ).rejects.toThrow('boom');
  });

  it('wins a tie with a deadline of the same length inside the work', async () => {
    vi.useFakeTimers();
    try {
      const raced = withTimeout(
        () => new Promise<string>((resolve) => setTimeout(() => resolve('inner deadline'), 100)),
        100,
        () => 'caller timeout',
      );
      await vi.advanceTimersByTimeAsync(100);
      await expect(raced).resolves.toBe('caller timeout');
    } finally {
      vi.useRealTimers();
    }
  });
});
