/**
 * One name for the video: summarize and comments/analyze take `url` (extract's name) as well as
 * `video_url` (their first name). One of them is required; both must name the same video.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { aiV1 } from '@subx/contracts';
import { KEYS, VIDEO, VIDEO_URL, buildTestGateway } from './support.ts';
import type { TestGateway } from './support.ts';

let gw: TestGateway;
const asked: string[] = [];
beforeEach(async () => {
  gw = await buildTestGateway();
  asked.length = 0;
  gw.backends.handlers.summarize = async (req) => {
    asked.push(req.videoId);
    return {
      videoId: req.videoId,
      summary: 'A short summary.',
      timestamps: [],
      videoTitle: 'Title',
      videoDuration: 300,
      videoChannel: 'Chan',
      cached: false,
      model: 'local-extractive',
      generatedAt: req.cachedOnly ? '' : '2026-03-10T10:00:00.000Z',
      language: 'en',
    };
  };
  gw.backends.handlers.analyzeComments = async (req) => {
    asked.push(req.videoId);
    return {
      videoId: req.videoId,
      sentiment: aiV1.Sentiment.SENTIMENT_POSITIVE,
      themes: ['music'],
      keyQuotes: [],
      sampleSize: 50,
      totalComments: 100n,
      cached: false,
      model: 'local-lexicon',
      generatedAt: '2026-03-10T10:00:00.000Z',
    };
  };
});
afterEach(async () => {
  await gw.app.close();
});

const post = (path: string, payload: object) =>
  gw.app.inject({ method: 'POST', url: path, payload, headers: { 'x-api-key': KEYS.pro } });

describe.each(['/api/v1/summarize', '/api/v1/comments/analyze'])('POST %s', (path) => {
  it('takes the video as url or as video_url, or both when they name the same video', async () => {
    for (const body of [
      { url: VIDEO_URL },
      { video_url: VIDEO_URL },
      { url: VIDEO_URL, video_url: VIDEO_URL },
      { url: `https://youtu.be/${VIDEO}`, video_url: `https://www.youtube.com/watch?v=${VIDEO}&t=5` },
    ]) {
      const res = await post(path, body);
      expect(res.statusCode, `${JSON.stringify(body)}: ${res.body}`).toBe(200);
      expect(res.json().video_id).toBe(VIDEO);
    }
    expect(asked.every((id) => id === VIDEO)).toBe(true);
  });

  it('answers 400 INVALID_REQUEST naming the field: neither given, or two different videos', async () => {
    const neither = await post(path, {});
    expect(neither.statusCode).toBe(400);
    expect(neither.json().error).toMatchObject({ code: 'INVALID_REQUEST', field: 'url' });
    expect(neither.json().error.message).toContain('body.url');

    const different = await post(path, { url: VIDEO_URL, video_url: 'https://youtu.be/jNQXAC9IVRw' });
    expect(different.statusCode).toBe(400);
    expect(different.json().error).toMatchObject({ code: 'INVALID_REQUEST', field: 'video_url' });
    expect(different.json().error.message).toContain('body.video_url');
    // Refused before any work: nothing asked of the AI service, nothing charged.
    expect(asked).toEqual([]);
    expect(gw.ledger.events).toEqual([]);
  });
});
