/**
 * Egress pacing through the real client against the fake platform: a spent budget makes requests
 * wait their turn, a wait past the bound is answered UPSTREAM_BLOCKED `paced` without a request
 * sent, translated tracks cost more, and `auto` leaves a fake or a replay unpaced.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeYouTube, videoIds, type FakeYouTube } from '@subx/testing/fake-youtube';
import type { AppError } from '@subx/errors';
import { YouTubeClient } from '../src/client.ts';
import { loadYouTubeConfig, pacingApplies } from '../src/config.ts';
import { virtualTime } from './virtual-time.ts';

let fake: FakeYouTube;
beforeAll(async () => {
  fake = await startFakeYouTube();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

function pacedClient(env: Record<string, string>, time = virtualTime(1_000_000)) {
  const config = loadYouTubeConfig({ YOUTUBE_BASE_URL: fake.url, YOUTUBE_PACING: 'on', ...env });
  return { yt: YouTubeClient.create(config, { clock: time.clock, sleep: time.sleep }), time };
}

describe('egress pacing', () => {
  it('lets a burst through, then makes each request wait for its turn', async () => {
    const { yt, time } = pacedClient({ YOUTUBE_PACING_PER_MINUTE: '60', YOUTUBE_PACING_BURST: '3' });
    try {
      await yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
      expect(yt.upstreamStats.pacedWaits).toBe(0);
      const first = fake.requests.length;
      await yt.getTranscript({ videoId: videoIds.autoOnly, language: 'en' });
      const second = fake.requests.length - first;
      // every request of the second extract came after the burst: each one waited
      expect(yt.upstreamStats.pacedWaits).toBe(second);
      expect(time.slept.filter((ms) => ms >= 999).length).toBeGreaterThanOrEqual(second);
      expect(yt.upstreamStats.pacedRefusals).toBe(0);
    } finally {
      await yt.close();
    }
  });

  it('answers UPSTREAM_BLOCKED paced, with Retry-After and nothing sent, past the longest wait', async () => {
    const { yt } = pacedClient({
      YOUTUBE_PACING_PER_MINUTE: '6',
      YOUTUBE_PACING_BURST: '3',
      YOUTUBE_PACING_MAX_WAIT_MS: '500',
    });
    try {
      await yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
      const sent = fake.requests.length;
      const err = (await yt
        .getTranscript({ videoId: videoIds.autoOnly, language: 'en' })
        .catch((e: unknown) => e)) as AppError;
      expect(err).toMatchObject({ code: 'UPSTREAM_BLOCKED', reason: 'paced', retryable: true });
      expect(err.retryAfterSeconds).toBe(10);
      expect(err.message).toMatch(/pace our requests/);
      expect(fake.requests.length).toBe(sent);
      expect(yt.upstreamStats.pacedRefusals).toBeGreaterThanOrEqual(1);
    } finally {
      await yt.close();
    }
  });

  it('charges a translated track more than a plain one', async () => {
    const env = {
      YOUTUBE_PACING_PER_MINUTE: '60',
      YOUTUBE_PACING_BURST: '4',
      YOUTUBE_PACING_TRANSLATED_COST: '4',
    };
    const plain = pacedClient(env);
    try {
      await plain.yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
      expect(plain.yt.upstreamStats.pacedWaits).toBe(0);
    } finally {
      await plain.yt.close();
    }
    const translated = pacedClient(env);
    try {
      await translated.yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'fr', translate: true });
      expect(fake.requests.some((r) => r.endpoint === 'timedtext' && r.query.tlang === 'fr')).toBe(true);
      // two /player requests (1 each) and the tlang caption request (4) need 6 tokens from a bucket of
      // 4 refilled at one a second: 2 s of waiting in all (a plain extract, above, waited none)
      expect(translated.yt.upstreamStats.pacedWaits).toBeGreaterThanOrEqual(1);
      expect(Math.round(translated.time.slept.reduce((a, b) => a + b, 0))).toBe(2_000);
    } finally {
      await translated.yt.close();
    }
  });

  it('auto paces the platform itself, not a fake or a replay; on and off say so outright', () => {
    const at = (YOUTUBE_BASE_URL: string | undefined, YOUTUBE_PACING?: string) =>
      pacingApplies(
        loadYouTubeConfig({
          ...(YOUTUBE_BASE_URL ? { YOUTUBE_BASE_URL } : {}),
          ...(YOUTUBE_PACING ? { YOUTUBE_PACING } : {}),
        }),
      );
    expect(at(undefined)).toBe(true);
    expect(at('https://m.youtube.com')).toBe(true);
    expect(at(fake.url)).toBe(false);
    expect(at(fake.url, 'on')).toBe(true);
    expect(at(undefined, 'off')).toBe(false);
  });

  it('under auto against the fake nothing waits, whatever the budget', async () => {
    const time = virtualTime(1_000_000);
    const config = loadYouTubeConfig({
      YOUTUBE_BASE_URL: fake.url,
      YOUTUBE_PACING_PER_MINUTE: '1',
      YOUTUBE_PACING_BURST: '1',
    });
    const yt = YouTubeClient.create(config, { clock: time.clock, sleep: time.sleep });
    try {
      await yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
      await yt.getTranscript({ videoId: videoIds.autoOnly, language: 'en' });
      expect(yt.upstreamStats.pacedWaits + yt.upstreamStats.pacedRefusals).toBe(0);
    } finally {
      await yt.close();
    }
  });

  it('refuses a bad pacing setting at start with the variable named', () => {
    expect(() => loadYouTubeConfig({ YOUTUBE_PACING: 'sometimes' })).toThrow(
      /YOUTUBE_PACING must be auto, on or off/,
    );
    expect(() => loadYouTubeConfig({ YOUTUBE_PACING_PER_MINUTE: '0' })).toThrow(/YOUTUBE_PACING_PER_MINUTE/);
  });
});
