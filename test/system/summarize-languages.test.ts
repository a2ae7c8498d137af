/**
 * Summaries of videos without English captions, through the real chain: gateway → AI service
 * (local engine) → extractor (ValidateVideo to choose the track, GetTranscript to read it) → the
 * fake YouTube replaying recorded players. The response says which language was read, and a
 * repeated request by the same user is free even with an empty balance.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessEventBus } from '@subx/ports';
import { startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import { startInProcessSystem } from './support.ts';
import type { InProcessSystem } from './support.ts';

describe('summarize picks the best caption track', () => {
  const bus = createInProcessEventBus();
  let yt: FakeYouTube;
  let system: InProcessSystem;

  beforeAll(async () => {
    yt = await startFakeYouTube();
    system = await startInProcessSystem({ youtubeUrl: yt.url, bus, ai: true, fanOut: 'direct' });
  });
  afterAll(async () => {
    await system?.stop();
    await bus.close();
    await yt?.close();
  });

  const summarize = (payload: Record<string, unknown>) =>
    system.gateway.app.inject({
      method: 'POST',
      url: '/api/v1/summarize',
      headers: { 'x-api-key': system.apiKey, 'content-type': 'application/json' },
      payload,
    });

  it('a video with French auto-generated captions only is summarised from them', async () => {
    const res = await summarize({ video_url: `https://youtu.be/${videoIds.autoOnlyFrench}` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ language: 'fr', cached: false });
    expect(res.json().summary.length).toBeGreaterThan(0);
    expect(res.json().credits_used).toBeGreaterThan(0);
  });

  it('a German video (manual and auto-generated de) is read in German; English is not required', async () => {
    const res = await summarize({ video_url: `https://youtu.be/${videoIds.germanNamedTrack}` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().language).toMatch(/^de/);
  });

  it('an explicit language that the video lacks is LANGUAGE_NOT_AVAILABLE, charged nothing', async () => {
    const before = (await system.gateway.access.accounts.get(system.accountId))!.credits;
    const res = await summarize({ video_url: `https://youtu.be/${videoIds.autoOnlyFrench}`, language: 'ja' });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('LANGUAGE_NOT_AVAILABLE');
    expect((await system.gateway.access.accounts.get(system.accountId))!.credits).toBe(before);
  });

  it('the same user again: cached, 0 credits, even with an empty balance', async () => {
    await system.gateway.access.accounts.update(system.accountId, { credits: 0 });
    const res = await summarize({ video_url: `https://youtu.be/${videoIds.autoOnlyFrench}` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ language: 'fr', cached: true, credits_used: 0 });
  });
});
