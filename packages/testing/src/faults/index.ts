export * from './own-redis.ts';
export * from './tcp-proxy.ts';
