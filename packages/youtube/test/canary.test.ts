/**
 * Canaries against the fake platform: one probe per client of the ladder (and egress), each through
 * that client alone, so a retired client shows as failing while the others stay ok; the probes'
 * upstream calls reach the service's observer; a new version of an identity gets a fresh prober.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeYouTube, videoIds, type FakeYouTube } from '@subx/testing/fake-youtube';
import { Canary, type CanaryProbe } from '../src/canary/canary.ts';
import { MAX_CANARY_VIDEOS, parseCanaryVideos } from '../src/canary/videos.ts';
import { loadYouTubeConfig, type YouTubeClientConfig } from '../src/config.ts';
import { UpstreamStats } from '../src/observer.ts';

let fake: FakeYouTube;
beforeAll(async () => {
  fake = await startFakeYouTube();
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  for (const c of ['VISIONOS', 'ANDROID', 'IOS']) fake.restoreClient(c);
});

const asked = (client: string) =>
  fake.requests.filter((r) => r.endpoint === 'player' && !r.query.$fields && r.clientName === client);

describe('Canary', () => {
  it('probes every client of the ladder on its own; a retired one fails while the others pass', async () => {
    let config: YouTubeClientConfig = loadYouTubeConfig({ YOUTUBE_BASE_URL: fake.url });
    const stats = new UpstreamStats();
    const reported: CanaryProbe[] = [];
    const canary = new Canary({
      config: () => config,
      videos: parseCanaryVideos(`${videoIds.manualAndAuto},${videoIds.autoOnly}:en`),
      intervalMs: 60_000,
      observer: stats,
      onProbe: (p) => void reported.push(p),
    });
    try {
      const first = await canary.runOnce();
      expect(first.map((p) => [p.client, p.egress, p.videoId, p.outcome])).toEqual([
        ['VISIONOS', 'direct', videoIds.manualAndAuto, 'ok'],
        ['ANDROID', 'direct', videoIds.manualAndAuto, 'ok'],
        ['IOS', 'direct', videoIds.manualAndAuto, 'ok'],
        // the candidate identity, probed after the ladder: its TV caption URLs answer empty in the fake
        ['TV_SAMSUNG', 'direct', videoIds.manualAndAuto, 'UPSTREAM_BLOCKED'],
        // the audio candidate: the recorded video's stream URLs lead to a dead host in the fake
        ['IOS_PRODUCER', 'direct', videoIds.manualAndAuto, 'UPSTREAM_ERROR'],
      ]);
      for (const c of ['VISIONOS', 'ANDROID', 'IOS']) expect(asked(c)).toHaveLength(1);
      expect(reported).toEqual(first);
      // the probes' calls are in the service's own upstream totals, by client
      expect(stats.total({ client: 'ANDROID', endpoint: 'player', outcome: 'ok' })).toBe(1);

      // VISIONOS retired overnight: its probe fails, the others still pass (the second video now)
      fake.retireClient('VISIONOS');
      fake.reset();
      const second = await canary.runOnce();
      expect(second.map((p) => [p.client, p.videoId, p.outcome === 'ok'])).toEqual([
        ['VISIONOS', videoIds.autoOnly, false],
        ['ANDROID', videoIds.autoOnly, true],
        ['IOS', videoIds.autoOnly, true],
        ['TV_SAMSUNG', videoIds.autoOnly, false],
        ['IOS_PRODUCER', videoIds.autoOnly, false],
      ]);
      expect(stats.total({ client: 'VISIONOS', outcome: 'client_rejected' })).toBeGreaterThanOrEqual(1);
      // ANDROID and IOS were asked once each: a probe goes through its own client only
      expect(asked('ANDROID')).toHaveLength(1);
      expect(asked('IOS')).toHaveLength(1);

      // a new VISIONOS version rolled out: probed as a new identity
      config = {
        ...config,
        clients: { ...config.clients, VISIONOS: { ...config.clients.VISIONOS!, version: '9.9' } },
      };
      fake.restoreClient('VISIONOS');
      fake.reset();
      const third = await canary.runOnce();
      expect(third.filter((p) => !p.candidate).every((p) => p.outcome === 'ok')).toBe(true);
      expect(asked('VISIONOS').map((r) => r.clientVersion)).toEqual(['9.9']);
    } finally {
      await canary.close();
    }
  });

  it('runs on its timer and never overlaps runs', async () => {
    const config = loadYouTubeConfig({ YOUTUBE_BASE_URL: fake.url });
    const reported: CanaryProbe[] = [];
    const canary = new Canary({
      config: () => ({ ...config, canary: { ...config.canary } }),
      videos: [{ id: videoIds.manualAndAuto, language: 'en' }],
      intervalMs: 200,
      onProbe: (p) => void reported.push(p),
    });
    try {
      const [a, b] = [canary.runOnce(), canary.runOnce()];
      expect(a).toBe(b);
      await a;
      canary.start();
      await expect.poll(() => reported.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(6);
    } finally {
      await canary.close();
    }
  });

  it('CANARY_VIDEOS: ids with an optional language; bad entries and too many are refused at start', () => {
    expect(parseCanaryVideos(' dQw4w9WgXcQ , kJQP7kiw5Fk:es ')).toEqual([
      { id: 'dQw4w9WgXcQ', language: 'en' },
      { id: 'kJQP7kiw5Fk', language: 'es' },
    ]);
    expect(parseCanaryVideos(undefined)).toEqual([]);
    expect(() => loadYouTubeConfig({ CANARY_VIDEOS: 'https://youtu.be/dQw4w9WgXcQ' })).toThrow(
      /CANARY_VIDEOS 'https:\/\/youtu.be\/dQw4w9WgXcQ' is not a video id/,
    );
    expect(() => loadYouTubeConfig({ CANARY_VIDEOS: 'dQw4w9WgXcQ:english!' })).toThrow(/no valid language/);
    const many = Array.from({ length: MAX_CANARY_VIDEOS + 1 }, () => 'dQw4w9WgXcQ').join(',');
    expect(() => loadYouTubeConfig({ CANARY_VIDEOS: many })).toThrow(/at most 20/);
    expect(() => loadYouTubeConfig({ CANARY_INTERVAL_MS: '5' })).toThrow(/CANARY_INTERVAL_MS/);
  });
});
