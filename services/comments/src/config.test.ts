import { describe, expect, it } from 'vitest';
import { loadCommentsConfig } from './config.ts';

describe('comments config', () => {
  it('refuses a bad value with one line naming the variable and what it expected', () => {
    expect(() => loadCommentsConfig({ COMMENTS_CACHE_TTL_MS: '-1' })).toThrow(
      /^Invalid configuration: COMMENTS_CACHE_TTL_MS: must be a positive duration/,
    );
    expect(() => loadCommentsConfig({ REDIS_URL: 'http://cache:6379' })).toThrow(
      /REDIS_URL: must be a URL with protocol redis: or rediss:/,
    );
  });

  it('reads METRICS_PORT and SHUTDOWN_TIMEOUT_MS like every service', () => {
    expect(loadCommentsConfig({ METRICS_PORT: 'off', SHUTDOWN_TIMEOUT_MS: '1m' })).toMatchObject({
      METRICS_PORT: null,
      SHUTDOWN_TIMEOUT_MS: 60_000,
    });
  });
});
