/**
 * The running extractor and a made-for-kids video every logged-out client of the ladder refuses
 * (the fake platform's synthKidsAu): `mode: auto` cannot read it while IOS_PRODUCER is unproven; once
 * the extractor's own canaries (CANARY_VIDEOS, the first run at start) have fetched audio through
 * IOS_PRODUCER twice, the same request transcribes the audio IOS_PRODUCER serves. The speech-to-text
 * endpoint is a loopback stand-in that answers `verbose_json`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commonV1, extractorV1 } from '@subx/contracts';
import { AppError } from '@subx/errors';
import { createLogger, type GrpcClient } from '@subx/service-kit';
import { startFakeYouTube, videoIds, type FakeYouTube } from '@subx/testing/fake-youtube';
import { startTestExtractor, type TestExtractor } from './fixtures/extractor-service.ts';

let youtube: FakeYouTube;
let speech: Server;
let transcribed = 0;
let extractor: TestExtractor;
let client: GrpcClient<extractorV1.ExtractorServiceClient>;

beforeAll(async () => {
  youtube = await startFakeYouTube({ mode: 'today' });
  speech = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      transcribed += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          text: 'one two three',
          language: 'english',
          duration: 70.25,
          segments: [{ start: 0.5, end: 2.5, text: ' one two three' }],
        }),
      );
    });
  });
  await new Promise<void>((resolve) => speech.listen(0, '127.0.0.1', resolve));
  extractor = await startTestExtractor({
    youtubeEnv: {
      YOUTUBE_BASE_URL: youtube.url,
      YOUTUBE_VERSION_REFRESH_MS: '0',
      // the captionless speech video: the audio probes of IOS_PRODUCER fetch its audio
      CANARY_VIDEOS: videoIds.speechNoCaptions,
      CANARY_INTERVAL_MS: '10000',
    },
    env: {
      TRANSCRIBE_BASE_URL: `http://127.0.0.1:${(speech.address() as AddressInfo).port}/v1`,
      TRANSCRIBE_API_KEY: 'test-key',
      // A model request fits the client's 30 s deadline (with less left, none is started).
      TRANSCRIBE_TIMEOUT_MS: '10000',
    },
    deadlineMs: 30_000,
    logger: createLogger({ service: 'extractor-kids-audio-test', level: 'silent' }),
  });
  client = extractor.client;
});

afterAll(async () => {
  await extractor?.stop();
  await new Promise((resolve) => speech?.close(resolve));
  await youtube?.close();
});

const auto = () =>
  client.getTranscript(
    extractorV1.GetTranscriptRequest.fromPartial({
      videoId: videoIds.madeForKidsAudio,
      language: 'en',
      mode: extractorV1.TranscriptMode.TRANSCRIPT_MODE_AUTO,
      forceRefresh: true,
    }),
  );
const producerAudioProbes = () =>
  youtube.requests.filter(
    (r) =>
      r.endpoint === 'player' && r.clientName === 'IOS_PRODUCER' && r.videoId === videoIds.speechNoCaptions,
  ).length;

describe('extractor, mode auto on a made-for-kids video', () => {
  it('transcribes its audio through IOS_PRODUCER once the canaries have proven it', async () => {
    // the first canary run at start: one audio probe, not yet enough to adopt
    await expect.poll(producerAudioProbes, { timeout: 30_000, interval: 200 }).toBeGreaterThanOrEqual(1);
    if (producerAudioProbes() < 2) {
      const err = await auto().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AppError);
      expect([(err as AppError).code, (err as AppError).reason]).toEqual(['VIDEO_UNAVAILABLE', 'unplayable']);
      expect(transcribed).toBe(0);
    }
    // the second run (10 s later) adopts it; the next request reaches it after the ladder's refusals
    await expect.poll(producerAudioProbes, { timeout: 30_000, interval: 250 }).toBeGreaterThanOrEqual(2);
    // the second probe's verdict lands once its audio piece is in: poll for the first success
    let answer: extractorV1.GetTranscriptResponse | undefined;
    await expect
      .poll(
        async () => {
          answer = await auto().catch(() => undefined);
          return answer !== undefined;
        },
        { timeout: 10_000, interval: 300 },
      )
      .toBe(true);
    if (!answer) throw new Error('no answer');
    expect(answer.subtitleType).toBe(commonV1.SubtitleType.SUBTITLE_TYPE_TRANSCRIBED);
    expect(answer.segments.map((s) => s.text)).toEqual(['one two three']);
    expect(transcribed).toBeGreaterThanOrEqual(1);
    const kidsPlayers = youtube.requests
      .filter((r) => r.endpoint === 'player' && r.videoId === videoIds.madeForKidsAudio && !r.query.$fields)
      .map((r) => r.clientName);
    expect(kidsPlayers).toContain('IOS_PRODUCER');
  }, 90_000);
});
