/**
 * The platform refusing caption translation (empty `tlang` answers, as since late 2026), through the
 * real YouTube client, the extractor over gRPC and the gateway: `translate: true` answers 404
 * LANGUAGE_NOT_AVAILABLE reason translation_unavailable with the languages there are, never the
 * source track passed off as a translation, and nothing is charged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessEventBus } from '@subx/ports';
import { startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import { startInProcessSystem } from './support.ts';
import type { InProcessSystem } from './support.ts';

const URL_ = `https://www.youtube.com/watch?v=${videoIds.manualAndAuto}`;

describe('caption translation refused by the platform', () => {
  const bus = createInProcessEventBus();
  let yt: FakeYouTube;
  let system: InProcessSystem;

  beforeAll(async () => {
    yt = await startFakeYouTube({ tlangRefused: true });
    system = await startInProcessSystem({ youtubeUrl: yt.url, bus, credits: 10 });
  });
  afterAll(async () => {
    await system?.stop();
    await bus.close();
    await yt?.close();
  });

  const post = (payload: Record<string, unknown>) =>
    system.gateway.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      headers: { 'x-api-key': system.apiKey, 'content-type': 'application/json' },
      payload,
    });
  const balance = async () => (await system.gateway.access.accounts.get(system.accountId))?.credits;

  it('answers 404 translation_unavailable with the available languages and charges nothing', async () => {
    const before = await balance();
    const res = await post({ url: URL_, language: 'fr', translate: true });
    expect(res.statusCode, res.body).toBe(404);
    const { error } = res.json<{
      error: { code: string; reason: string; retryable: boolean; available_languages: string[] };
    }>();
    expect(error).toMatchObject({
      code: 'LANGUAGE_NOT_AVAILABLE',
      reason: 'translation_unavailable',
      retryable: false,
    });
    expect(error.available_languages).toContain('en');
    expect(await balance()).toBe(before);
  });

  it('still serves the source language itself', async () => {
    const res = await post({ url: URL_, language: 'en', translate: true });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).not.toHaveProperty('translated_from');
  });
});
