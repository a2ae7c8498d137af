/**
 * End to end: `npm start` on its own redis-server, which the test freezes
 * (SIGSTOP) and kills. No request may hang or answer 500: operations that need Redis (daily
 * limits) answer a retryable 503 SERVICE_UNAVAILABLE, the open routes degrade (validate skips its
 * cache, the per-IP limit counts in process), /health answers within its deadline.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeYouTube, videoIds, type FakeYouTube } from '@subx/testing/fake-youtube';
import { redisServerAvailable, startOwnRedis, type OwnRedis } from '@subx/testing/faults';
import { jsonPost, startSystem, timedFetch, type RunningSystem } from './support.ts';

// Throws under CI when redis-server is missing: there the suite runs, never skips.
const available = redisServerAvailable();

// The Redis command timeout is 1 s; a request makes a few sequential commands. Loaded CI machines
// get slack; before the fix these requests never answered at all (or answered 500).
const BOUND_MS = 8_000;
const VIDEO_URL = `https://www.youtube.com/watch?v=${videoIds.manualAndAuto}`;

describe.skipIf(!available)('fault: Redis frozen or down under npm start', () => {
  let redis: OwnRedis;
  let youtube: FakeYouTube;
  let system: RunningSystem;

  beforeAll(async () => {
    redis = await startOwnRedis();
    youtube = await startFakeYouTube();
    system = await startSystem({ REDIS_URL: redis.url, YOUTUBE_BASE_URL: youtube.url });
  }, 90_000);
  afterAll(async () => {
    redis?.thaw();
    await system?.stop();
    await youtube?.close();
    await redis?.stop();
  });

  const extract = () =>
    timedFetch(`${system.base}/api/v1/extract`, jsonPost(system.apiKey, { url: VIDEO_URL }));
  const validate = () => timedFetch(`${system.base}/api/v1/validate?url=${encodeURIComponent(VIDEO_URL)}`);
  const health = () => timedFetch(`${system.base}/health`);

  function expectStoreUnavailable(res: Awaited<ReturnType<typeof extract>>) {
    expect(res.status).toBe(503);
    const error = res.body.error as Record<string, unknown>;
    expect(error.code).toBe('SERVICE_UNAVAILABLE');
    expect(error.retryable).toBe(true);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(res.ms).toBeLessThan(BOUND_MS);
  }

  it('with Redis up, everything answers normally', async () => {
    expect((await extract()).status).toBe(200);
    expect((await validate()).status).toBe(200);
  });

  it('Redis frozen: extract is a quick retryable 503, validate and /health still answer', async () => {
    redis.freeze();
    try {
      const [e, v, h] = await Promise.all([extract(), validate(), health()]);
      expectStoreUnavailable(e);
      expect(v.status).toBe(200);
      expect(v.ms).toBeLessThan(BOUND_MS);
      expect(h.status).not.toBe(500);
      expect([200, 503]).toContain(h.status);
      expect(h.ms).toBeLessThan(BOUND_MS);
    } finally {
      redis.thaw();
    }
  });

  it('Redis killed: the same, without waiting for reconnects; back to normal after a restart', async () => {
    await redis.kill();
    const [e, v, h] = await Promise.all([extract(), validate(), health()]);
    expectStoreUnavailable(e);
    expect(v.status).toBe(200);
    expect([200, 503]).toContain(h.status);
    expect(h.ms).toBeLessThan(BOUND_MS);
    await redis.start();
    await expect.poll(async () => (await extract()).status, { timeout: 20_000, interval: 250 }).toBe(200);
  });
});
