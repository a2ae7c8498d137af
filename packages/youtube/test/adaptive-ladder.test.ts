/**
 * The platform retires VISIONOS while the service runs (every VISIONOS /player
 * answers 400 FAILED_PRECONDITION, as on 2026-09-11). Against the fake in today's mode at 100 ms per
 * answer, 25 cold extracts all succeed, VISIONOS is asked at most 5 times over them, the last 10 are
 * back to 2 round trips (median under 2.6 x the answer time), and the refusals are counted by outcome.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { videoIds, type FakeYouTube } from '@subx/testing/fake-youtube';
import type { YouTubeClient } from '../src/index.ts';
import { clientFor, roundTrips, setup, timedFetch, type TimedCall } from './support.ts';

const ANSWER_MS = 100;
const VIDEOS = [videoIds.manualAndAuto, videoIds.unlistedShort, videoIds.manyTracks, videoIds.autoOnlyFrench];
const LANGUAGE: Record<string, string> = {
  [videoIds.manualAndAuto]: 'en',
  [videoIds.unlistedShort]: 'en',
  [videoIds.manyTracks]: 'de',
  [videoIds.autoOnlyFrench]: 'fr',
};

let fake: FakeYouTube;
beforeAll(async () => {
  fake = await setup('today');
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  fake.restoreClient('VISIONOS');
  fake.restoreClient('ANDROID');
  fake.setLatency(0);
});

const asked = (client: string) =>
  fake.requests.filter((r) => r.endpoint === 'player' && r.clientName === client && !r.query.$fields).length;

async function extracts(client: YouTubeClient, timed: TimedCall[], n: number) {
  const runs: { ms: number; roundTrips: number }[] = [];
  for (let i = 0; i < n; i++) {
    const videoId = VIDEOS[i % VIDEOS.length] as string;
    timed.length = 0;
    const started = performance.now();
    const t = await client.getTranscript({ videoId, language: LANGUAGE[videoId] as string });
    runs.push({ ms: performance.now() - started, roundTrips: roundTrips(timed) });
    expect(t.segments.length).toBeGreaterThan(0);
  }
  return runs;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2
    ? (s[(s.length - 1) / 2] as number)
    : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};

describe('the adaptive ladder against a client retired mid-run', () => {
  it('VISIONOS retired: 25/25 succeed, VISIONOS asked at most 5 times, the last 10 back to 2 round trips', async () => {
    const timed: TimedCall[] = [];
    const client = clientFor(fake, {}, { fetch: timedFetch(timed) });
    // the service was running and VISIONOS answering
    await extracts(client, timed, 3);
    expect(asked('VISIONOS')).toBe(3);
    fake.reset();
    fake.retireClient('VISIONOS');
    fake.setLatency(ANSWER_MS);
    const runs = await extracts(client, timed, 25);
    expect(runs).toHaveLength(25);
    expect(asked('VISIONOS')).toBeLessThanOrEqual(5);
    const last10 = runs.slice(-10);
    console.info(
      `VISIONOS retired: ${asked('VISIONOS')} VISIONOS asks; runs ${JSON.stringify(runs.map((r) => [Math.round(r.ms), r.roundTrips]))}`,
    );
    expect(last10.every((r) => r.roundTrips === 2)).toBe(true);
    expect(median(last10.map((r) => r.ms))).toBeLessThan(2.6 * ANSWER_MS);
    expect(client.upstreamStats.total({ client: 'VISIONOS', outcome: 'client_rejected' })).toBe(
      asked('VISIONOS'),
    );
    const visionos = client.ladder.health().find((h) => h.identity === 'VISIONOS@1.04');
    expect(visionos).toMatchObject({ okTotal: 3, failedTotal: asked('VISIONOS') });
    await client.close();
  });

  it('VISIONOS and ANDROID retired: extracts still succeed through IOS', async () => {
    const client = clientFor(fake);
    fake.retireClient('VISIONOS');
    fake.retireClient('ANDROID');
    const runs = await extracts(client, [], 8);
    expect(runs).toHaveLength(8);
    expect(asked('VISIONOS')).toBe(1);
    expect(asked('ANDROID')).toBe(1);
    expect(asked('IOS')).toBe(8);
    await client.close();
  });

  it('a retired client comes back through its probe once the platform serves it again', async () => {
    let now = Date.UTC(2026, 5, 1);
    const client = clientFor(
      fake,
      { YOUTUBE_LADDER_PROBE_INTERVAL_MS: '60000' },
      { clock: { now: () => now } },
    );
    fake.retireClient('VISIONOS');
    await extracts(client, [], 4);
    expect(asked('VISIONOS')).toBe(1);
    fake.restoreClient('VISIONOS');
    await extracts(client, [], 2);
    expect(asked('VISIONOS')).toBe(1);
    now += 60_000;
    await extracts(client, [], 3);
    expect(asked('VISIONOS')).toBe(4);
    expect(client.ladder.isOut({ name: 'VISIONOS', version: '1.04' })).toBe(false);
    await client.close();
  });
});
