import { Redis } from 'ioredis';
import type { KeyValueStore } from './port.ts';

export interface RedisKeyValueStoreOptions {
  url: string;
}

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
 */
export function createRedisKeyValueStore(options: RedisKeyValueStoreOptions): KeyValueStore {
  const redis = new Redis(options.url, { lazyConnect: false, maxRetriesPerRequest: 3 }) as ScriptedRedis;
  redis.defineCommand('subxIncrement', { numberOfKeys: 1, lua: INCREMENT });
  redis.defineCommand('subxIncrementWithin', { numberOfKeys: 1, lua: INCREMENT_WITHIN });
  // ioredis reconnects by itself; without a listener an unreachable server is an unhandled 'error'.
  redis.on('error', () => undefined);

  let subscriber: Redis | null = null;
  const handlers = new Map<string, Set<(message: string) => void>>();
  const subscribed = new Map<string, Promise<void>>();

  const getSubscriber = (): Redis => {
    if (!subscriber) {
      subscriber = redis.duplicate();
      subscriber.on('error', () => undefined);
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
      return redis.get(key);
    },
    async set(key, value, opts = {}) {
      if (opts.ttlMs === undefined) await redis.set(key, value);
      else await redis.set(key, value, 'PX', Math.max(1, Math.trunc(opts.ttlMs)));
    },
    async setIfAbsent(key, value, opts = {}) {
      const result =
        opts.ttlMs === undefined
          ? await redis.set(key, value, 'NX')
          : await redis.set(key, value, 'PX', Math.max(1, Math.trunc(opts.ttlMs)), 'NX');
      return result === 'OK';
    },
    async delete(key) {
      await redis.del(key);
    },
    async ttlMs(key) {
      const ttl = await redis.pttl(key);
      return ttl < 0 ? null : ttl;
    },
    async increment(key, by, opts = {}) {
      if (opts.expireAtMs === undefined) return redis.incrby(key, by);
      return Number(await redis.subxIncrement(key, by, expiry(opts.expireAtMs)));
    },
    async incrementWithin(key, by, limit, opts = {}) {
      const [applied, value] = await redis.subxIncrementWithin(key, by, limit, expiry(opts.expireAtMs));
      return { applied: applied === 1, value: Number(value) };
    },
    async publish(channel, message) {
      await redis.publish(channel, message);
    },
    async subscribe(channel, handler) {
      const registration = (message: string): void => handler(message);
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
          .then(() => undefined);
        subscribed.set(channel, ready);
      }
      await ready;
      return async () => {
        const current = handlers.get(channel);
        if (!current?.delete(registration) || current.size > 0) return;
        handlers.delete(channel);
        subscribed.delete(channel);
        await subscriber?.unsubscribe(channel);
      };
    },
    async ping() {
      await redis.ping();
    },
    async close() {
      await Promise.allSettled([redis.quit(), subscriber?.quit()]);
    },
  };
}
