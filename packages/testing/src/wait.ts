/**
 * The one way tests wait: poll a condition until it holds, with a bound and a message that says
 * what was awaited. Never a fixed sleep.
 */

export interface WaitForOptions {
  /** Default 10 000 ms. */
  timeoutMs?: number;
  /** Pause between polls. Default 10 ms. */
  intervalMs?: number;
  /** What was awaited, for the error; a function is read at the timeout (e.g. the last value seen). */
  message?: string | (() => string);
}

/** Polls `predicate` until it holds; fails with `message` after `timeoutMs`. */
export async function waitFor(
  predicate: () => boolean | Promise<boolean>,
  { timeoutMs = 10_000, intervalMs = 10, message = 'condition' }: WaitForOptions = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return;
    if (Date.now() > deadline) {
      const what = typeof message === 'function' ? message() : message;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

/** A promise with its resolve and reject at hand: a test decides when something finishes. */
export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
