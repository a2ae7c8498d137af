/**
 * The audio of made-for-kids videos against the fake platform: every logged-out client of the ladder
 * answers such a video unplayable, and IOS_PRODUCER (yt-dlp 2026.11.23's `ios_producer`) plays it.
 * IOS_PRODUCER is a candidate identity behind a canary that fetches audio: never asked for a user
 * until its probes have fetched audio through it, then asked only after every ladder client refused
 * the video. And the clients whose streams need a PO token (WEB, WEB_EMBEDDED) are never asked for
 * audio: skipped, not failed on.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeYouTube, videoIds, type FakeYouTube } from '@subx/testing/fake-youtube';
import { Canary } from '../src/canary/canary.ts';
import { parseCanaryVideos } from '../src/canary/videos.ts';
import type { YouTubeClient } from '../src/client.ts';
import { clientFor, errorOf } from './support.ts';

let fake: FakeYouTube;
beforeAll(async () => {
  fake = await startFakeYouTube({ mode: 'today' });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

/** Unmasked /player calls in order, by InnerTube client name. */
const players = () =>
  fake.requests.filter((r) => r.endpoint === 'player' && !r.query.$fields).map((r) => r.clientName);

/** Canaries on the captionless speech video: the ladder's caption probes fail, audio probes pass. */
function canaryOf(yt: YouTubeClient, video: string = videoIds.speechNoCaptions): Canary {
  return new Canary({
    config: () => yt.config,
    videos: parseCanaryVideos(video),
    intervalMs: 60_000,
    ladder: yt.ladder,
  });
}

const producer = (yt: YouTubeClient) => yt.config.clients.IOS_PRODUCER!;

describe('IOS_PRODUCER, the audio of made-for-kids videos', () => {
  it('is in the catalogue as yt-dlp 2026.11.23 defines ios_producer, a candidate off the ladder', () => {
    const yt = clientFor(fake);
    expect(producer(yt)).toMatchObject({
      name: 'IOS_PRODUCER',
      id: 92,
      version: '0.147.945',
      extra: { deviceModel: 'iPhone16,2', osVersion: '18.3.2.22D82' },
      canary: true,
      fallbackForUnplayable: true,
    });
    expect(producer(yt).userAgent).toMatch(/^com\.google\.ios\.youtubeproducer\/0\.147\.945 /);
    expect(yt.config.captionClients).toEqual(['VISIONOS', 'ANDROID', 'IOS']);
  });

  it('unproven, it is never asked: a made-for-kids video stays unplayable', async () => {
    const yt = clientFor(fake);
    const err = await errorOf(yt.getTranscript({ videoId: videoIds.madeForKidsAudio, language: 'en' }));
    expect([err.code, err.reason]).toEqual(['VIDEO_UNAVAILABLE', 'unplayable']);
    expect(players()).toEqual(['VISIONOS', 'ANDROID', 'IOS']);
    expect((await errorOf(yt.getAudio({ videoId: videoIds.madeForKidsAudio }))).code).toBe(
      'VIDEO_UNAVAILABLE',
    );
    expect(players()).not.toContain('IOS_PRODUCER');
    await yt.close();
  });

  it('is adopted by two audio probes, then plays made-for-kids videos last, and only them', async () => {
    const yt = clientFor(fake);
    const canary = canaryOf(yt);
    try {
      for (let run = 0; run < 2; run++) {
        const probe = (await canary.runOnce()).find((p) => p.client === 'IOS_PRODUCER');
        expect(probe).toMatchObject({ outcome: 'ok', candidate: true, probes: 'audio' });
      }
      expect(yt.ladder.isAdopted(producer(yt))).toBe(true);
      // the probe fetched audio through IOS_PRODUCER's own stream URL
      expect(fake.requests.some((r) => r.endpoint === 'videoplayback')).toBe(true);

      fake.reset();
      // captions: every ladder client refuses, IOS_PRODUCER plays it and lists no caption track
      const noCaptions = await errorOf(
        yt.getTranscript({ videoId: videoIds.madeForKidsAudio, language: 'en' }),
      );
      expect(noCaptions.code).toBe('NO_SUBTITLES');
      expect(players()).toEqual(['VISIONOS', 'ANDROID', 'IOS', 'IOS_PRODUCER']);

      fake.reset();
      // the audio, which `mode: "auto"` transcribes: mp4a (itag 140), the only audio it serves
      const audio = await yt.getAudio({ videoId: videoIds.madeForKidsAudio });
      expect(audio.format.itag).toBe(140);
      expect(audio.metadata.title).toBe('Counting to ten for kids');
      let bytes = 0;
      for await (const piece of audio.pieces) bytes += piece.byteLength;
      expect(bytes).toBe(audio.format.contentLength);
      expect(players()).toEqual(['VISIONOS', 'ANDROID', 'IOS', 'IOS_PRODUCER']);

      fake.reset();
      // a video the ladder plays never reaches it
      await yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
      expect(players()).toEqual(['VISIONOS']);
      // nor one the ladder blocks on
      fake.reset();
      fake.failNext({ kind: 'botCheck' }, { endpoint: 'player', times: 6 });
      const blocked = await errorOf(yt.getAudio({ videoId: videoIds.madeForKidsAudio }));
      expect(blocked.code).toBe('UPSTREAM_BLOCKED');
      expect(players()).not.toContain('IOS_PRODUCER');
    } finally {
      await canary.close();
      await yt.close();
    }
  });

  it('a failed audio probe un-adopts it', async () => {
    const yt = clientFor(fake);
    const canary = canaryOf(yt);
    const onRecorded = canaryOf(yt, videoIds.manualAndAuto);
    try {
      await canary.runOnce();
      await canary.runOnce();
      expect(yt.ladder.isAdopted(producer(yt))).toBe(true);
      // a recorded video's stream URLs lead to a dead stream host: the audio probe fails
      const probe = (await onRecorded.runOnce()).find((p) => p.client === 'IOS_PRODUCER');
      expect(probe?.outcome).toBe('UPSTREAM_ERROR');
      expect(yt.ladder.isAdopted(producer(yt))).toBe(false);
    } finally {
      await canary.close();
      await onRecorded.close();
      await yt.close();
    }
  });
});

describe('clients whose streams need a PO token', () => {
  it('WEB and WEB_EMBEDDED are marked so, as data', () => {
    const yt = clientFor(fake);
    expect(yt.config.clients.WEB?.streamsNeedPoToken).toBe(true);
    expect(yt.config.clients.WEB_EMBEDDED).toMatchObject({
      name: 'WEB_EMBEDDED_PLAYER',
      id: 56,
      streamsNeedPoToken: true,
    });
    expect(yt.config.clients.VISIONOS?.streamsNeedPoToken).toBeUndefined();
  });

  it('are skipped for audio even first on the ladder, never failing the request', async () => {
    const yt = clientFor(fake, {
      // WEB-family clients on the ladder need a PO-token provider; audio never asks it
      YOUTUBE_PO_TOKEN_PROVIDER_URL: 'http://127.0.0.1:9',
      YOUTUBE_CLIENTS: JSON.stringify({ order: ['WEB_EMBEDDED', 'WEB', 'VISIONOS'] }),
    });
    const audio = await yt.getAudio({ videoId: videoIds.speechNoCaptions });
    expect(audio.format.url).toContain('/videoplayback?');
    expect(players()).toEqual(['VISIONOS']);
    await yt.close();
  });
});
