/**
 * Canaries in the running extractor (CANARY_VIDEOS): with VISIONOS retired in the fake platform, the
 * extractor's own /metrics shows VISIONOS's canary down and the others up, before any user extract.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, startMetricsServer, type MetricsServer } from '@subx/service-kit';
import { startFakeYouTube, videoIds, type FakeYouTube } from '@subx/testing/fake-youtube';
import { startTestExtractor, type TestExtractor } from './fixtures/extractor-service.ts';

let youtube: FakeYouTube;
let extractor: TestExtractor;
let metrics: MetricsServer;

beforeAll(async () => {
  youtube = await startFakeYouTube({ mode: 'today' });
  youtube.retireClient('VISIONOS');
  extractor = await startTestExtractor({
    youtubeEnv: {
      YOUTUBE_BASE_URL: youtube.url,
      YOUTUBE_VERSION_REFRESH_MS: '0',
      CANARY_VIDEOS: videoIds.manualAndAuto,
      CANARY_INTERVAL_MS: '10000',
    },
    logger: createLogger({ service: 'extractor-canary-test', level: 'silent' }),
  });
  metrics = await startMetricsServer({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await metrics?.close();
  await extractor?.stop();
  await youtube?.close();
});

describe('extractor canaries', () => {
  it('shows a retired client down on /metrics on its own, before any user traffic', async () => {
    const sample = (text: string, series: string) =>
      text
        .split('\n')
        .find((l) => l.startsWith(`${series} `))
        ?.split(' ')[1];
    await expect
      .poll(
        async () =>
          sample(await (await fetch(metrics.url)).text(), 'subx_canary_up{client="IOS",egress="direct"}'),
        {
          timeout: 30_000,
          interval: 500,
        },
      )
      .toBe('1');
    const text = await (await fetch(metrics.url)).text();
    expect(sample(text, 'subx_canary_up{client="VISIONOS",egress="direct"}')).toBe('0');
    expect(sample(text, 'subx_canary_up{client="ANDROID",egress="direct"}')).toBe('1');
    expect(text).toMatch(/subx_canary_probes_total\{client="VISIONOS",egress="direct",outcome="[A-Z_]+"\} 1/);
    // the probes' own platform calls are in the upstream metrics, by client and outcome
    expect(text).toMatch(
      /subx_upstream_requests_total\{component="extractor",client="VISIONOS",client_version="[^"]+",upstream_endpoint="player",egress="direct",outcome="client_rejected"\} [1-9]/,
    );
  });
});
