import { randomUUID } from 'node:crypto';
import { Redis, ReplyError } from 'ioredis';
import { KeyValueUnavailableError, checkPrefix, type KeyValueStore } from './port.ts';

export interface RedisKeyValueStoreOptions {
  url: string;
  /**
   * Bound on every command, from the call to the reply, queued time included. Default 1 000 ms: a
   * frozen or unreachable Redis costs a request at most this long per command.
   */
  commandTimeoutMs?: number;
  /** Bound on the TCP connect + handshake of each (re)connection attempt. Default 2 000 ms. */
  connectTimeoutMs?: number;
  /**
   * Commands that may wait for the first connection (startup). Past it, and always once a
   * connection has been lost (until it is back), commands fail at once. Default 1 000.
   */
  maxQueued?: number;
  /** Commands sent and not yet answered, at most (a frozen server never answers). Default 10 000. */
  maxInFlight?: number;
  /** Reconnect delay cap (ms); attempts back off 100 ms, 200 ms, ... up to it. Default 2 000 ms. */
  maxReconnectDelayMs?: number;
}

/** Keys SCAN looks at per step, and the steps of one walk at most (10 million keys). */
const SCAN_COUNT = 1_000;
const SCAN_MAX_STEPS = 10_000;

// INCRBY, then PEXPIREAT when an absolute expiry is given: one atomic step.
const INCREMENT = `
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
if ARGV[2] ~= '' then redis.call('PEXPIREAT', KEYS[1], ARGV[2]) end
return value`;

// Adds only while the result stays <= limit; returns {applied (0/1), value after the call}.
const INCREMENT_WITHIN = `
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current == nil then return redis.error_reply('value is not an integer') end
if current + tonumber(ARGV[1]) > tonumber(ARGV[2]) then return {0, current} end
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
if ARGV[3] ~= '' then redis.call('PEXPIREAT', KEYS[1], ARGV[3]) end
return {1, value}`;

interface ScriptedRedis extends Redis {
  subxIncrement(key: string, by: number, expireAtMs: string): Promise<number>;
  subxIncrementWithin(key: string, by: number, limit: number, expireAtMs: string): Promise<[number, number]>;
}

/**
 * KeyValueStore on Redis with ioredis. Read-modify-write operations are Lua scripts (EVALSHA),
 * so they are atomic across every process. Pub/sub uses a second connection, opened on the first
 * subscribe, because a subscribed Redis connection cannot run other commands.
 *
 * Every wait is bounded (README "Key-value"): each command has a timeout, only the first
 * connection may queue commands (a bounded number), a lost connection fails commands at once
 * until it is back, and the number of unanswered commands is capped. Those failures are
 * `KeyValueUnavailableError`; Redis's own error replies (WRONGTYPE, ...) pass through unchanged.
 */
export function createRedisKeyValueStore(options: RedisKeyValueStoreOptions): KeyValueStore {
  const commandTimeoutMs = options.commandTimeoutMs ?? 1_000;
  const maxQueued = options.maxQueued ?? 1_000;
  const maxInFlight = options.maxInFlight ?? 10_000;
  const maxReconnectDelayMs = options.maxReconnectDelayMs ?? 2_000;
  const redis = new Redis(options.url, {
    lazyConnect: false,
    commandTimeout: commandTimeoutMs,
    connectTimeout: options.connectTimeoutMs ?? 2_000,
    // A command queued while disconnected fails after one reconnect attempt, not three.
    maxRetriesPerRequest: 1,
    // Replaying writes that may have been applied (INCRBY) after a reconnect would double count.
    autoResendUnfulfilledCommands: false,
    retryStrategy: (attempt) => Math.min(attempt * 100, maxReconnectDelayMs),
  }) as ScriptedRedis;
  redis.defineCommand('subxIncrement', { numberOfKeys: 1, lua: INCREMENT });
  redis.defineCommand('subxIncrementWithin', { numberOfKeys: 1, lua: INCREMENT_WITHIN });
  // ioredis reconnects by itself; without a listener an unreachable server is an unhandled 'error'.
  redis.on('error', () => undefined);
  let everReady = false;
  redis.on('ready', () => (everReady = true));
  let queued = 0;
  let inFlight = 0;

  /** Runs one command within the bounds above; connection-level failures become KeyValueUnavailableError. */
  const run = async <T>(command: () => Promise<T>): Promise<T> => {
    const ready = redis.status === 'ready';
    if (!ready && (everReady || queued >= maxQueued)) {
      throw new KeyValueUnavailableError(`redis is not connected (${redis.status})`);
    }
    if (inFlight >= maxInFlight) {
      throw new KeyValueUnavailableError(`redis has ${inFlight} unanswered commands`);
    }
    inFlight++;
    if (!ready) queued++;
    try {
      return await command();
    } catch (error) {
      if (error instanceof ReplyError) throw error;
      throw new KeyValueUnavailableError(`redis: ${(error as Error).message}`, { cause: error });
    } finally {
      inFlight--;
      if (!ready) queued--;
    }
  };

  // One subscriber connection per store: what PUBLISH counts as one receiver.
  const clientId = randomUUID();
  let subscriber: Redis | null = null;
  const handlers = new Map<string, Set<(message: string) => void>>();
  const subscribed = new Map<string, Promise<void>>();

  const connectionListeners = new Set<(live: boolean) => void>();
  const tell = (live: boolean): void => {
    for (const listener of connectionListeners) {
      try {
        listener(live);
      } catch (error) {
        console.error('key-value connection listener threw', error);
      }
    }
  };

  const getSubscriber = (): Redis => {
    if (!subscriber) {
      const connection = redis.duplicate();
      subscriber = connection;
      connection.on('error', () => undefined);
      // 'close' repeats while reconnecting: subscribers hear of the loss once. ioredis resubscribes
      // on 'ready', but only sends the commands then; subscribing here as well and awaiting it
      // means "live again" is said only once Redis confirmed every channel.
      let lost = false;
      connection.on('close', () => {
        if (lost) return;
        lost = true;
        tell(false);
      });
      connection.on('ready', () => {
        if (!lost) return;
        const channels = [...subscribed.keys()];
        (channels.length > 0 ? connection.subscribe(...channels) : Promise.resolve()).then(
          () => {
            if (!lost || connection.status !== 'ready') return;
            lost = false;
            tell(true);
          },
          // Lost again meanwhile: the next 'ready' tries again.
          () => undefined,
        );
      });
      subscriber.on('message', (channel: string, message: string) => {
        for (const handler of handlers.get(channel) ?? []) {
          try {
            handler(message);
          } catch (error) {
            console.error('key-value subscriber threw', error);
          }
        }
      });
    }
    return subscriber;
  };

  const expiry = (expireAtMs: number | undefined): string =>
    expireAtMs === undefined ? '' : String(Math.trunc(expireAtMs));

  return {
    async get(key) {
      return run(() => redis.get(key));
    },
    async set(key, value, opts = {}) {
      if (opts.ttlMs === undefined) await run(() => redis.set(key, value));
      else await run(() => redis.set(key, value, 'PX', Math.max(1, Math.trunc(opts.ttlMs ?? 1))));
    },
    async setIfAbsent(key, value, opts = {}) {
      const ttl = opts.ttlMs;
      const result = await run(() =>
        ttl === undefined
          ? redis.set(key, value, 'NX')
          : redis.set(key, value, 'PX', Math.max(1, Math.trunc(ttl)), 'NX'),
      );
      return result === 'OK';
    },
    async delete(key) {
      await run(() => redis.del(key));
    },
    async deleteByPrefix(prefix) {
      checkPrefix(prefix);
      // SCAN's MATCH is a glob: the prefix's own *, ?, [ and \ are escaped to mean themselves.
      const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
      let cursor = '0';
      let deleted = 0;
      // Each step is one bounded command; the walk ends when SCAN says so, at most SCAN_MAX_STEPS.
      for (let step = 0; step < SCAN_MAX_STEPS; step += 1) {
        const [next, keys] = await run(() => redis.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT));
        if (keys.length > 0) deleted += await run(() => redis.unlink(...keys));
        cursor = next;
        if (cursor === '0') return deleted;
      }
      throw new Error(`deleteByPrefix: the keyspace walk did not end in ${SCAN_MAX_STEPS} steps`);
    },
    async ttlMs(key) {
      const ttl = await run(() => redis.pttl(key));
      return ttl < 0 ? null : ttl;
    },
    async increment(key, by, opts = {}) {
      const expireAt = expiry(opts.expireAtMs);
      if (opts.expireAtMs === undefined) return run(() => redis.incrby(key, by));
      return Number(await run(() => redis.subxIncrement(key, by, expireAt)));
    },
    async incrementWithin(key, by, limit, opts = {}) {
      const expireAt = expiry(opts.expireAtMs);
      const [applied, value] = await run(() => redis.subxIncrementWithin(key, by, limit, expireAt));
      return { applied: applied === 1, value: Number(value) };
    },
    clientId,
    async publish(channel, message) {
      return run(() => redis.publish(channel, message));
    },
    async subscribe(channel, handler, subscribeOptions = {}) {
      const registration = (message: string): void => handler(message);
      const { onConnection } = subscribeOptions;
      let set = handlers.get(channel);
      if (!set) {
        set = new Set();
        handlers.set(channel, set);
      }
      set.add(registration);
      // SUBSCRIBE resolves once Redis confirmed it, so nothing published afterwards is missed;
      // later subscribers of the channel wait for that same confirmation.
      let ready = subscribed.get(channel);
      if (!ready) {
        ready = getSubscriber()
          .subscribe(channel)
          .then(
            () => undefined,
            (error: unknown) => {
              subscribed.delete(channel);
              throw new KeyValueUnavailableError(`redis subscribe: ${(error as Error).message}`, {
                cause: error,
              });
            },
          );
        subscribed.set(channel, ready);
      }
      try {
        await ready;
      } catch (error) {
        set.delete(registration);
        throw error;
      }
      // A listener object of its own, so one subscription's unsubscribe removes only its listener.
      const listener = onConnection ? (live: boolean): void => onConnection(live) : undefined;
      if (listener) connectionListeners.add(listener);
      return async () => {
        if (listener) connectionListeners.delete(listener);
        const current = handlers.get(channel);
        if (!current?.delete(registration) || current.size > 0) return;
        handlers.delete(channel);
        subscribed.delete(channel);
        await subscriber?.unsubscribe(channel);
      };
    },
    async ping() {
      await run(() => redis.ping());
    },
    async close() {
      await Promise.allSettled([redis.quit(), subscriber?.quit()]);
    },
  };
}
