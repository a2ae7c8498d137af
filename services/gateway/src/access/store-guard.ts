/**
 * What the gateway does when the key-value store (Redis) cannot answer in time: the store's
 * `KeyValueUnavailableError` becomes a retryable 503 SERVICE_UNAVAILABLE (with Retry-After), so an
 * operation that needs the store (daily limits, idempotency, usage counters) fails closed with an
 * answer the client can act on instead of a 500 or a hang. Operations that can do without the
 * store catch it with `isStoreUnavailable` and degrade (README "When Redis is down").
 */
import { AppError, isAppError } from '@subx/errors';
import { isKeyValueUnavailable } from '@subx/ports';
import type { KeyValueStore } from '@subx/ports';

/** Seconds a client is told to wait before retrying. */
const RETRY_AFTER_SECONDS = 2;

function storeUnavailable(cause: unknown): AppError {
  return new AppError(
    'SERVICE_UNAVAILABLE',
    'Request limits and credits cannot be checked right now; retry shortly.',
    { cause, retryAfterSeconds: RETRY_AFTER_SECONDS },
  );
}

/** True for the 503 of `storeUnavailable` (and for the raw port error). */
export function isStoreUnavailable(error: unknown): boolean {
  if (isKeyValueUnavailable(error)) return true;
  return isAppError(error) && error.code === 'SERVICE_UNAVAILABLE' && isKeyValueUnavailable(error.cause);
}

/** The same store, with unavailability reported as `storeUnavailable(...)`. */
export function guardKeyValueStore(kv: KeyValueStore): KeyValueStore {
  const reported = (error: unknown): never => {
    throw isKeyValueUnavailable(error) ? storeUnavailable(error) : error;
  };
  // Not an async wrapper: every counted request goes through here, and `catch` on the
  // operation's own promise is one promise less than awaiting it inside another.
  const guard =
    <A extends unknown[], R>(operation: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      let pending: Promise<R>;
      try {
        pending = operation(...args);
      } catch (error) {
        return Promise.reject(error).catch(reported);
      }
      return pending.catch(reported);
    };
  return {
    get: guard((key) => kv.get(key)),
    set: guard((key, value, options) => kv.set(key, value, options)),
    setIfAbsent: guard((key, value, options) => kv.setIfAbsent(key, value, options)),
    delete: guard((key) => kv.delete(key)),
    deleteByPrefix: guard((prefix) => kv.deleteByPrefix(prefix)),
    ttlMs: guard((key) => kv.ttlMs(key)),
    increment: guard((key, by, options) => kv.increment(key, by, options)),
    incrementWithin: guard((key, by, limit, options) => kv.incrementWithin(key, by, limit, options)),
    clientId: kv.clientId,
    // Unguarded: a store that answers in this process is never unavailable.
    ...(kv.inProcess ? { inProcess: kv.inProcess } : {}),
    publish: guard((channel, message) => kv.publish(channel, message)),
    subscribe: guard((channel, handler, options) => kv.subscribe(channel, handler, options)),
    ping: guard(() => kv.ping()),
    close: () => kv.close(),
  };
}
