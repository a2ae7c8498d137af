/**
 * Model work over gRPC against the fake platform's captionless video and a stand-in speech model
 * (a real HTTP server): a transcription is made once per video whatever metadata is asked, and
 * handed out fresh (to be paid) once; work whose caller left is stopped, never cached to be
 * served free; work a call has no time for is refused before anything is downloaded; and a
 * failure that is the model's verdict on the audio is remembered, not bought again.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { extractorV1 } from '@subx/contracts';
import { startFakeSpeech, type FakeSpeech } from '@subx/testing/fake-speech';
import { startFakeYouTube, videoIds, type FakeYouTube } from '@subx/testing/fake-youtube';
import { startTestExtractor, type TestExtractor } from './fixtures/extractor-service.ts';

const TRANSCRIBE = 3;

describe('model work and who it is handed to', () => {
  let youtube: FakeYouTube;
  let model: FakeSpeech;
  let extractor: TestExtractor | undefined;

  beforeAll(async () => {
    youtube = await startFakeYouTube();
  });
  afterEach(async () => {
    await extractor?.stop();
    extractor = undefined;
    await model?.close();
  });
  afterAll(async () => {
    await youtube?.close();
  });

  async function start(env: Record<string, string>, deadlineMs = 20_000): Promise<TestExtractor> {
    extractor = await startTestExtractor({
      youtubeEnv: { YOUTUBE_BASE_URL: youtube.url, YOUTUBE_RETRIES: '0' },
      env: { TRANSCRIBE_BASE_URL: model.baseUrl, TRANSCRIBE_TIMEOUT_MS: '5000', ...env },
      deadlineMs,
    });
    return extractor;
  }

  const request = (extra: Partial<extractorV1.GetTranscriptRequest> = {}): extractorV1.GetTranscriptRequest =>
    extractorV1.GetTranscriptRequest.create({
      videoId: videoIds.speechNoCaptions,
      language: 'en',
      mode: TRANSCRIBE,
      accountId: 'acct-a',
      ...extra,
    });

  it('concurrent requests with different metadata make one model call, handed out fresh once', async () => {
    model = await startFakeSpeech({ delayMs: 300 });
    const { client } = await start({});
    const includes = [[], ['tags'], ['description'], ['chapters'], ['tags', 'view_count'], ['is_live']];
    const answers = await Promise.all(includes.map((include) => client.getTranscript(request({ include }))));
    expect(model.uploads()).toBe(1);
    expect(answers.filter((a) => !a.cached)).toHaveLength(1);
    // each answer carries the metadata it asked for, and no more
    const withTags = answers[1]!;
    expect(withTags.metadata?.tags).toBeDefined();
    expect(answers[0]!.metadata?.tags).toBeUndefined();
    expect(answers[2]!.metadata?.description).toBeDefined();
    expect(answers[0]!.metadata?.description).toBeUndefined();
    // and a later request with yet another set is a hit
    const later = await client.getTranscript(request({ include: ['like_count'] }));
    expect(later.cached).toBe(true);
    expect(model.uploads()).toBe(1);
  });

  it('a caller that gives up stops the model request; nothing is cached to be served free', async () => {
    model = await startFakeSpeech({ delayMs: 2_000 });
    const { client } = await start({});
    const leaving = new AbortController();
    const gaveUp = client.getTranscript(request(), { signal: leaving.signal });
    await expect.poll(() => model.uploads(), { timeout: 5_000 }).toBe(1);
    leaving.abort();
    await expect(gaveUp).rejects.toThrow();
    await expect.poll(() => model.abandoned(), { timeout: 5_000 }).toBe(1);
    model.set({ delayMs: 0 });
    // the retry is made (and handed out fresh: paid), not served from a cache it never paid for
    const retry = await client.getTranscript(request());
    expect(retry.cached).toBe(false);
    expect(retry.source).toBe('audio');
    expect(model.uploads()).toBe(2);
  });

  it('a call whose deadline leaves less than one model request is refused before any download', async () => {
    model = await startFakeSpeech();
    const { client } = await start({ TRANSCRIBE_TIMEOUT_MS: '10000' }, 3_000);
    const audioBefore = youtube.requests.filter((r) => r.path.includes('videoplayback')).length;
    await expect(client.getTranscript(request())).rejects.toMatchObject({ code: 'AUDIO_TOO_LONG' });
    expect(model.uploads()).toBe(0);
    expect(youtube.requests.filter((r) => r.path.includes('videoplayback')).length).toBe(audioBefore);
  });

  it('audio without speech: three requests, one model call, the verdict remembered even on force_refresh', async () => {
    model = await startFakeSpeech({ heard: 'silence' });
    const { client } = await start({});
    for (const extra of [{}, { accountId: 'acct-b' }, { forceRefresh: true }]) {
      await expect(client.getTranscript(request(extra))).rejects.toMatchObject({ code: 'NO_SPEECH' });
    }
    expect(model.uploads()).toBe(1);
  });

  it('a model timeout is remembered for the video: the repeat sends nothing', async () => {
    model = await startFakeSpeech({ delayMs: 3_000 });
    const { client } = await start({ TRANSCRIBE_TIMEOUT_MS: '1000' });
    await expect(client.getTranscript(request())).rejects.toMatchObject({ code: 'TRANSCRIPTION_FAILED' });
    await expect(client.getTranscript(request())).rejects.toMatchObject({ code: 'TRANSCRIPTION_FAILED' });
    expect(model.uploads()).toBe(1);
  });
});
