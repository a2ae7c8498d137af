export * from './own-redis.ts';
