/**
 * kafkajs 2.2.4 (its last release) schedules its next look at a broker's pending requests with
 * `setTimeout(check, throttledUntil - Date.now())`; unthrottled, `throttledUntil` is -1, so the
 * delay is minus the epoch in milliseconds and Node prints `TimeoutNegativeWarning` (then waits
 * 1 ms). This puts the same method back with the delay it means: the same schedule, at least
 * 1 ms, never negative. Installed once, before any client of this bus is made.
 */
import { createRequire } from 'node:module';

/** kafkajs's wait before it looks again at requests held back by in-flight limits. */
const CHECK_PENDING_REQUESTS_INTERVAL_MS = 10;

interface RequestQueueLike {
  throttledUntil: number;
  pending: unknown[];
  throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

let installed = false;

export function installRequestQueueTimerFix(): void {
  if (installed) return;
  installed = true;
  const require = createRequire(import.meta.url);
  const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as {
    prototype: RequestQueueLike;
  };
  // A kafkajs whose queue is shaped otherwise is left as it is.
  if (typeof RequestQueue.prototype?.scheduleCheckPendingRequests !== 'function') return;
  RequestQueue.prototype.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(
    this: RequestQueueLike,
  ) {
    if (this.throttleCheckTimeoutId) return;
    let scheduleAt = this.throttledUntil - Date.now();
    if (this.pending.length > 0)
      scheduleAt = scheduleAt > 0 ? scheduleAt : CHECK_PENDING_REQUESTS_INTERVAL_MS;
    this.throttleCheckTimeoutId = setTimeout(
      () => {
        this.throttleCheckTimeoutId = null;
        this.checkPendingRequests();
      },
      Math.max(1, scheduleAt),
    );
  };
}
