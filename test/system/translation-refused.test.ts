/**
 * The platform refusing caption translation (empty `tlang` answers, as since late 2026), through the
 * real YouTube client, the extractor over gRPC and the gateway: `translate: true` answers 404
 * LANGUAGE_NOT_AVAILABLE reason translation_unavailable with the languages there are, never the
 * source track passed off as a translation, and nothing is charged. With a model configured (a real
 * HTTP stand-in for an OpenAI-compatible endpoint) the model translates the source's segments,
 * which keep their timings, and the answer says `translated_by: "model"`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessEventBus } from '@subx/ports';
import type { FakeOpenAi } from '@subx/testing/fake-openai';
import { startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import { startInProcessSystem, startPrefixTranslator } from './support.ts';
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

describe('caption translation refused by the platform, a model configured', () => {
  const bus = createInProcessEventBus();
  let yt: FakeYouTube;
  let model: FakeOpenAi;
  let system: InProcessSystem;

  beforeAll(async () => {
    yt = await startFakeYouTube({ tlangRefused: true });
    // the stand-in translates by prefixing each segment, keeping the count and order
    model = await startPrefixTranslator('FR: ');
    system = await startInProcessSystem({
      youtubeUrl: yt.url,
      bus,
      credits: 10,
      extractorEnv: { OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'sk-test-not-a-real-key' },
    });
  });
  afterAll(async () => {
    await system?.stop();
    await bus.close();
    await yt?.close();
    await model?.close();
  });

  const post = (payload: Record<string, unknown>) =>
    system.gateway.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      headers: { 'x-api-key': system.apiKey, 'content-type': 'application/json' },
      payload,
    });
  const balance = async () => (await system.gateway.access.accounts.get(system.accountId))?.credits;
  type Answer = {
    language: string;
    translated_from: string;
    translated_by: string;
    cached: boolean;
    subtitles: { text: string; start: number; duration: number }[];
  };

  it('answers the model translation with the source timings, translated_by model, and charges it', async () => {
    const source = await post({ url: URL_, language: 'en', include_timestamps: true });
    expect(source.statusCode, source.body).toBe(200);
    const sourceSegments = source.json<Answer>().subtitles;

    const before = await balance();
    const res = await post({ url: URL_, language: 'fr', translate: true, include_timestamps: true });
    expect(res.statusCode, res.body).toBe(200);
    const answer = res.json<Answer>();
    // from the manual English track; a translation is machine-made whoever made it (docs/api.md)
    expect(source.json()).toMatchObject({ subtitle_type: 'manual' });
    expect(answer).toMatchObject({
      language: 'fr',
      translated_from: 'en',
      translated_by: 'model',
      subtitle_type: 'auto_generated',
      credits_used: 2,
    });
    expect(answer.subtitles.map((s) => [s.start, s.duration])).toEqual(
      sourceSegments.map((s) => [s.start, s.duration]),
    );
    expect(answer.subtitles.map((s) => s.text)).toEqual(sourceSegments.map((s) => `FR: ${s.text}`));
    expect(model.requests.length).toBeGreaterThan(0);
    expect(await balance()).toBe(before! - 2);
  });

  it('is cached like any transcript: asked again, no model call and no translation charge', async () => {
    const calls = model.requests.length;
    const before = await balance();
    const res = await post({ url: URL_, language: 'fr', translate: true, format: 'srt' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).toContain('FR: ');
    expect(model.requests.length).toBe(calls);
    expect(await balance()).toBe(before);
  });
});
