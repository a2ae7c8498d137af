/**
 * The result of `start()`, or `onTimeout()`'s if it has not settled within `ms`. The timer is armed
 * before `start` runs, so a deadline of the same length inside the work (a gRPC deadline, say)
 * loses the tie and the caller's timeout is what it sees. The timer never outlives the race; the
 * work keeps running after a timeout, so cancel it from `onTimeout` if it can be.
 */
export async function withTimeout<T, F>(
  start: () => Promise<T>,
  ms: number,
  onTimeout: () => F,
): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  const cutOff = new Promise<F>((resolve) => {
    timer = setTimeout(() => resolve(onTimeout()), Math.max(0, ms));
  });
  try {
    return await Promise.race([start(), cutOff]);
  } finally {
    clearTimeout(timer);
  }
}
