/**
 * Canaries in the running extractor (CANARY_VIDEOS): with VISIONOS retired in the fake platform, the
 * extractor's own /metrics shows VISIONOS's canary down and the others up, before any user extract.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInMemoryKeyValueStore } from '@subx/ports';
import { createLogger, startMetricsServer, type MetricsServer } from '@subx/service-kit';
import { startFakeYouTube, videoIds, type FakeYouTube } from '@subx/testing/fake-youtube';
import { loadYouTubeConfig } from '@subx/youtube';
import { loadExtractorConfig, startExtractorService, type RunningExtractorService } from '../src/index.ts';

let youtube: FakeYouTube;
let service: RunningExtractorService;
let metrics: MetricsServer;

beforeAll(async () => {
  youtube = await startFakeYouTube({ mode: 'today' });
  youtube.retireClient('VISIONOS');
  service = await startExtractorService({
    config: loadExtractorConfig({ GRPC_PORT: '0', LOG_LEVEL: 'silent' }),
    youtube: loadYouTubeConfig({
      YOUTUBE_BASE_URL: youtube.url,
      YOUTUBE_VERSION_REFRESH_MS: '0',
      CANARY_VIDEOS: videoIds.manualAndAuto,
      CANARY_INTERVAL_MS: '10000',
    }),
    kv: createInMemoryKeyValueStore(),
    logger: createLogger({ service: 'extractor-canary-test', level: 'silent' }),
    host: '127.0.0.1',
  });
  metrics = await startMetricsServer({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await metrics?.close();
  await service?.stop(1_000);
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
