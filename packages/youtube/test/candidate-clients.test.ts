/**
 * A candidate identity behind a canary (TV_SAMSUNG, yt-dlp's `tv_samsung`) against the fake platform:
 * adopted for users only after the canaries' probes fetched caption bodies through it; never adopted,
 * and never asked for a user, while its caption URLs answer empty (September 2026's probes); demoted
 * at once, without failing the user's request, when an adopted candidate's captions turn empty.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeYouTube, videoIds, type FakeYouTube } from '@subx/testing/fake-youtube';
import { Canary } from '../src/canary/canary.ts';
import { parseCanaryVideos } from '../src/canary/videos.ts';
import type { YouTubeClient } from '../src/client.ts';
import { clientFor } from './support.ts';

let fake: FakeYouTube;
beforeAll(async () => {
  fake = await startFakeYouTube({ mode: 'today' });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

/** Unmasked /player calls in order, by InnerTube client name. */
const players = () =>
  fake.requests.filter((r) => r.endpoint === 'player' && !r.query.$fields).map((r) => r.clientName);
const tvCaptionGets = () =>
  fake.requests.filter((r) => r.endpoint === 'timedtext' && r.query.c === 'TVHTML5');

function canaryOf(yt: YouTubeClient): Canary {
  return new Canary({
    config: () => yt.config,
    videos: parseCanaryVideos(videoIds.manualAndAuto),
    intervalMs: 60_000,
    ladder: yt.ladder,
  });
}

const tv = (yt: YouTubeClient) => yt.config.clients.TV_SAMSUNG!;

describe('candidate identity TV_SAMSUNG', () => {
  it('is in the catalogue as yt-dlp 2026.10.26 defines tv_samsung, off the configured ladder', () => {
    const yt = clientFor(fake);
    expect(tv(yt)).toMatchObject({ name: 'TVHTML5', id: 7, version: '5.20260707', canary: true });
    expect(tv(yt).userAgent).toContain('Tizen 2.4.0');
    expect(yt.config.captionClients).toEqual(['VISIONOS', 'ANDROID', 'IOS']);
  });

  it('is adopted after two canary runs whose captions answered, then serves users first', async () => {
    const yt = clientFor(fake);
    const canary = canaryOf(yt);
    try {
      fake.setTvCaptions('answer');
      // unproven: a user's extract never asks it
      await yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
      expect(players()).toEqual(['VISIONOS']);

      const first = await canary.runOnce();
      expect(first.map((p) => [p.client, p.outcome, p.candidate ?? false])).toEqual([
        ['VISIONOS', 'ok', false],
        ['ANDROID', 'ok', false],
        ['IOS', 'ok', false],
        ['TV_SAMSUNG', 'ok', true],
        // the audio candidate: the recorded video's stream host is dead in the fake
        ['IOS_PRODUCER', 'UPSTREAM_ERROR', true],
      ]);
      expect(tvCaptionGets().length).toBeGreaterThanOrEqual(1);
      expect(yt.ladder.isAdopted(tv(yt))).toBe(false);
      await canary.runOnce();
      expect(yt.ladder.isAdopted(tv(yt))).toBe(true);

      fake.reset();
      fake.setTvCaptions('answer');
      const t = await yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
      expect(t.segments.length).toBeGreaterThan(0);
      expect(players()).toEqual(['TVHTML5']);
      expect(tvCaptionGets()).toHaveLength(1);
      // its success keeps it adopted
      expect(yt.ladder.isAdopted(tv(yt))).toBe(true);
    } finally {
      await canary.close();
      await yt.close();
    }
  });

  it('is never adopted while its caption URLs answer empty, and no user request fails', async () => {
    const yt = clientFor(fake);
    const canary = canaryOf(yt);
    try {
      for (let run = 0; run < 3; run++) {
        const probes = await canary.runOnce();
        const probe = probes.find((p) => p.client === 'TV_SAMSUNG');
        expect(probe).toMatchObject({
          outcome: 'UPSTREAM_BLOCKED',
          reason: 'empty_caption_body',
          candidate: true,
        });
        expect(probes.filter((p) => !p.candidate).every((p) => p.outcome === 'ok')).toBe(true);
      }
      expect(yt.ladder.isAdopted(tv(yt))).toBe(false);
      expect(yt.ladder.health().find((h) => h.identity === 'TVHTML5@5.20260707')).toMatchObject({
        okTotal: 0,
        failedTotal: 3,
      });

      fake.reset();
      for (const videoId of [videoIds.manualAndAuto, videoIds.autoOnly]) {
        const t = await yt.getTranscript({ videoId, language: 'en' });
        expect(t.segments.length).toBeGreaterThan(0);
      }
      expect(players()[0]).toBe('VISIONOS');
      expect(players()).not.toContain('TVHTML5');
      expect(tvCaptionGets()).toHaveLength(0);
    } finally {
      await canary.close();
      await yt.close();
    }
  });

  it('an adopted candidate whose captions turn empty is demoted while the user still gets captions', async () => {
    const yt = clientFor(fake);
    const canary = canaryOf(yt);
    try {
      fake.setTvCaptions('answer');
      await canary.runOnce();
      await canary.runOnce();
      expect(yt.ladder.isAdopted(tv(yt))).toBe(true);

      fake.reset(); // the platform turns: TV caption URLs answer empty again
      const t = await yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
      expect(t.segments.length).toBeGreaterThan(0);
      expect(players()).toEqual(['TVHTML5', 'VISIONOS']);
      expect(yt.ladder.isAdopted(tv(yt))).toBe(false);

      // demoted: the next request goes straight to the configured ladder
      fake.reset();
      await yt.getTranscript({ videoId: videoIds.manualAndAuto, language: 'en' });
      expect(players()).toEqual(['VISIONOS']);
    } finally {
      await canary.close();
      await yt.close();
    }
  });

  it('a refused candidate probe counts against it and heals no WEB version', async () => {
    const yt = clientFor(fake);
    const canary = canaryOf(yt);
    fake.retireClient('TVHTML5');
    try {
      const probes = await canary.runOnce();
      expect(probes.find((p) => p.client === 'TV_SAMSUNG')?.outcome).not.toBe('ok');
      expect(players().filter((c) => c === 'TVHTML5')).toHaveLength(1);
      expect(fake.count('sw_js_data')).toBe(0);
      expect(yt.ladder.health().find((h) => h.identity === 'TVHTML5@5.20260707')).toMatchObject({
        failedTotal: 1,
      });
    } finally {
      fake.restoreClient('TVHTML5');
      await canary.close();
      await yt.close();
    }
  });

  it('can be switched off in YOUTUBE_CLIENTS: then the canaries do not probe it', async () => {
    const yt = clientFor(fake, {
      YOUTUBE_CLIENTS: JSON.stringify({ clients: { TV_SAMSUNG: { canary: false } } }),
    });
    const canary = canaryOf(yt);
    try {
      const probes = await canary.runOnce();
      expect(probes.map((p) => p.client)).toEqual(['VISIONOS', 'ANDROID', 'IOS', 'IOS_PRODUCER']);
      expect(players()).not.toContain('TVHTML5');
    } finally {
      await canary.close();
      await yt.close();
    }
  });
});
