/**
 * The interstitial error screen (October 2026: `errorScreen.playerInterstitialRenderer`, no reason, no
 * `playerErrorMessageRenderer`) on the fake platform, through the real YouTube client, the extractor
 * over gRPC and the gateway: a bot check is 503 UPSTREAM_BLOCKED reason bot_check, an age gate 404
 * VIDEO_UNAVAILABLE reason age_restricted, and validate says age_restricted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessEventBus } from '@subx/ports';
import { startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import { startInProcessSystem } from './support.ts';
import type { InProcessSystem } from './support.ts';

const watch = (id: string) => `https://www.youtube.com/watch?v=${id}`;

describe('the interstitial error screen through the gateway', () => {
  const bus = createInProcessEventBus();
  let yt: FakeYouTube;
  let system: InProcessSystem;

  beforeAll(async () => {
    yt = await startFakeYouTube();
    system = await startInProcessSystem({ youtubeUrl: yt.url, bus, credits: 10 });
  });
  afterAll(async () => {
    await system?.stop();
    await bus.close();
    await yt?.close();
  });

  const extract = (id: string) =>
    system.gateway.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      headers: { 'x-api-key': system.apiKey, 'content-type': 'application/json' },
      payload: { url: watch(id) },
    });
  const balance = async () => (await system.gateway.access.accounts.get(system.accountId))?.credits;

  it('a bot check is 503 UPSTREAM_BLOCKED reason bot_check, retryable, nothing charged', async () => {
    const before = await balance();
    const res = await extract(videoIds.interstitialBotCheck);
    expect(res.statusCode, res.body).toBe(503);
    expect(res.json<{ error: unknown }>().error).toMatchObject({
      code: 'UPSTREAM_BLOCKED',
      reason: 'bot_check',
      retryable: true,
    });
    expect(await balance()).toBe(before);
  });

  it('an age gate is 404 VIDEO_UNAVAILABLE reason age_restricted, nothing charged', async () => {
    const before = await balance();
    const res = await extract(videoIds.interstitialAgeGate);
    expect(res.statusCode, res.body).toBe(404);
    expect(res.json<{ error: unknown }>().error).toMatchObject({
      code: 'VIDEO_UNAVAILABLE',
      reason: 'age_restricted',
      retryable: false,
    });
    expect(await balance()).toBe(before);
  });

  it('validate says age_restricted for the age gate', async () => {
    const res = await system.gateway.app.inject({
      method: 'GET',
      url: `/api/v1/validate?url=${encodeURIComponent(watch(videoIds.interstitialAgeGate))}`,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ valid: false, reason: { code: 'age_restricted' } });
  });
});
