/**
 * The running extractor and a candidate identity (TV_SAMSUNG) behind its canaries (CANARY_VIDEOS,
 * every 10 s, the first at start): while the fake platform's TV caption URLs answer empty, user
 * extracts never reach the TV client; once they answer, two canary runs adopt it and the next user
 * extract is served through it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractorV1 } from '@subx/contracts';
import { createLogger, type GrpcClient } from '@subx/service-kit';
import { startFakeYouTube, videoIds, type FakeYouTube } from '@subx/testing/fake-youtube';
import { startTestExtractor, type TestExtractor } from './fixtures/extractor-service.ts';

let youtube: FakeYouTube;
let extractor: TestExtractor;
let client: GrpcClient<extractorV1.ExtractorServiceClient>;

beforeAll(async () => {
  youtube = await startFakeYouTube({ mode: 'today' });
  extractor = await startTestExtractor({
    youtubeEnv: {
      YOUTUBE_BASE_URL: youtube.url,
      YOUTUBE_VERSION_REFRESH_MS: '0',
      CANARY_VIDEOS: videoIds.manualAndAuto,
      CANARY_INTERVAL_MS: '10000',
    },
    logger: createLogger({ service: 'extractor-candidate-test', level: 'silent' }),
  });
  client = extractor.client;
});

afterAll(async () => {
  await extractor?.stop();
  await youtube?.close();
});

/** The canary's TV caption GETs so far, and whether each answered. */
const tvCaptionGets = () =>
  youtube.requests.filter((r) => r.endpoint === 'timedtext' && r.query.c === 'TVHTML5');

const userPlayers = (since: number) =>
  youtube.requests
    .slice(since)
    .filter((r) => r.endpoint === 'player' && !r.query.$fields)
    .map((r) => r.clientName);

async function coldExtract(videoId: string) {
  const t = await client.getTranscript(
    extractorV1.GetTranscriptRequest.fromPartial({ videoId, language: 'en', forceRefresh: true }),
  );
  expect(t.segments.length).toBeGreaterThan(0);
}

describe('extractor with a candidate identity behind its canaries', () => {
  it('serves users through TV_SAMSUNG only after its canary probes got captions', async () => {
    // the first canary run at start probes TV_SAMSUNG: its caption URL answers empty
    await expect.poll(() => tvCaptionGets().length, { timeout: 30_000, interval: 200 }).toBeGreaterThan(0);
    const since = youtube.requests.length;
    await coldExtract(videoIds.autoOnly);
    expect(userPlayers(since)).not.toContain('TVHTML5');

    // the platform starts answering TV captions: two canary runs (10 s apart) adopt it
    youtube.setTvCaptions('answer');
    const probed = tvCaptionGets().length;
    await expect
      .poll(() => tvCaptionGets().length, { timeout: 30_000, interval: 250 })
      .toBeGreaterThanOrEqual(probed + 2);
    // the second probe's verdict lands once its whole answer is in: the next extracts go to TVHTML5 first
    await expect
      .poll(
        async () => {
          const since = youtube.requests.length;
          await coldExtract(videoIds.manualAndAuto);
          return userPlayers(since);
        },
        { timeout: 10_000, interval: 200 },
      )
      .toEqual(['TVHTML5']);
  }, 60_000);
});
