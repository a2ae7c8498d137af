/**
 * A translation starts from the video's original-language track, never from a track that is itself
 * a translation, through the real YouTube client, the extractor over gRPC and the gateway:
 * - the recorded GJLlxj_dtq8 (an English review whose Chinese manual track is listed first; its
 *   original audio track's default caption track is en) translated to French says
 *   `translated_from: "en"`, and the platform was asked to translate the en track;
 * - a synthetic English video whose only statement of the original is
 *   `defaultTranslationSourceTrackIndices` (manual zh, en, ja; zh first) does too;
 * - when the platform refuses to translate and a model does, the model is given the en track.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInProcessEventBus } from '@subx/ports';
import type { FakeOpenAi } from '@subx/testing/fake-openai';
import { startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import { startInProcessSystem, startPrefixTranslator } from './support.ts';
import type { InProcessSystem } from './support.ts';

const watch = (id: string) => `https://www.youtube.com/watch?v=${id}`;

interface Answer {
  language: string;
  translated_from?: string;
  translated_by?: string;
  subtitles: { text: string }[];
}

describe('translation from the original track', () => {
  const bus = createInProcessEventBus();
  let yt: FakeYouTube;
  let system: InProcessSystem;

  beforeAll(async () => {
    yt = await startFakeYouTube();
    system = await startInProcessSystem({ youtubeUrl: yt.url, bus, credits: 20 });
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
  const translatedTracks = (videoId: string) =>
    yt.requests.filter((r) => r.endpoint === 'timedtext' && r.query.v === videoId && r.query.tlang);

  it.each([
    ['a recorded video whose Chinese track is listed first', videoIds.poTokenOnWeb],
    [
      'translated tracks listed first, only the default translation source named',
      videoIds.translationsListedFirst,
    ],
  ])('%s: translated_from is en, and the en track is what the platform translates', async (_, videoId) => {
    const res = await post({ url: watch(videoId), language: 'fr', translate: true });
    expect(res.statusCode, res.body).toBe(200);
    const answer = res.json<Answer>();
    expect(answer).toMatchObject({ language: 'fr', translated_from: 'en', translated_by: 'platform' });
    const asked = translatedTracks(videoId);
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((r) => r.query.lang === 'en' && r.query.tlang === 'fr')).toBe(true);
  });

  it('a language the video has as a track is that track, not a translation', async () => {
    const res = await post({ url: watch(videoIds.translationsListedFirst), language: 'zh', translate: true });
    expect(res.statusCode, res.body).toBe(200);
    const answer = res.json<Answer>();
    expect(answer.language).toBe('zh');
    expect(answer).not.toHaveProperty('translated_from');
  });
});

describe('translation from the original track, by a model', () => {
  const bus = createInProcessEventBus();
  let yt: FakeYouTube;
  let model: FakeOpenAi;
  let system: InProcessSystem;
  const given: string[][] = [];

  beforeAll(async () => {
    yt = await startFakeYouTube({ tlangRefused: true });
    model = await startPrefixTranslator('DE: ', given);
    system = await startInProcessSystem({
      youtubeUrl: yt.url,
      bus,
      credits: 20,
      extractorEnv: { OPENAI_BASE_URL: model.baseUrl, OPENAI_API_KEY: 'sk-test-not-a-real-key' },
    });
  });
  afterAll(async () => {
    await system?.stop();
    await bus.close();
    await model?.close();
    await yt?.close();
  });

  it('the platform refuses, the model translates the en track: translated_from en', async () => {
    const res = await system.gateway.app.inject({
      method: 'POST',
      url: '/api/v1/extract',
      headers: { 'x-api-key': system.apiKey, 'content-type': 'application/json' },
      payload: { url: watch(videoIds.translationsListedFirst), language: 'de', translate: true },
    });
    expect(res.statusCode, res.body).toBe(200);
    const answer = res.json<Answer>();
    expect(answer).toMatchObject({ language: 'de', translated_from: 'en', translated_by: 'model' });
    // the fake's generated cues name their track: the model heard the English one
    expect(given.flat().length).toBeGreaterThan(0);
    expect(given.flat().every((text) => text.endsWith(`${videoIds.translationsListedFirst} en`))).toBe(true);
    expect(answer.subtitles.every((s) => s.text.startsWith('DE: '))).toBe(true);
  });
});
