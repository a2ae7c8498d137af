/**
 * End to end: a real extractor (gRPC) and its /metrics against the fake platform in today's
 * mode at 100 ms per answer, over loopback. VISIONOS is retired while the service runs (every VISIONOS
 * /player answers 400 FAILED_PRECONDITION): 25 of 25 cold extracts succeed, VISIONOS is asked at most 5
 * times, the median of the last 10 is under 2.6 x 100 ms, and /metrics counts VISIONOS's refusals by
 * outcome. With ANDROID retired as well, extracts still succeed through IOS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractorV1 } from '@subx/contracts';
import { createLogger, startMetricsServer, type GrpcClient, type MetricsServer } from '@subx/service-kit';
import { startFakeYouTube, videoIds, type FakeYouTube } from '@subx/testing/fake-youtube';
import { startTestExtractor, type TestExtractor } from './fixtures/extractor-service.ts';

const ANSWER_MS = 100;
const logger = createLogger({ service: 'extractor-ladder-test', level: 'silent' });
const CASES = [
  { videoId: videoIds.manualAndAuto, language: 'en' },
  { videoId: videoIds.unlistedShort, language: 'en' },
  { videoId: videoIds.manyTracks, language: 'de' },
  { videoId: videoIds.autoOnlyFrench, language: 'fr' },
];

let youtube: FakeYouTube;
let extractor: TestExtractor;
let metrics: MetricsServer;
let client: GrpcClient<extractorV1.ExtractorServiceClient>;

beforeAll(async () => {
  youtube = await startFakeYouTube({ mode: 'today' });
  extractor = await startTestExtractor({
    youtubeEnv: { YOUTUBE_BASE_URL: youtube.url, YOUTUBE_VERSION_REFRESH_MS: '0' },
    logger,
  });
  metrics = await startMetricsServer({ port: 0, host: '127.0.0.1' });
  client = extractor.client;
});

afterAll(async () => {
  await metrics?.close();
  await extractor?.stop();
  await youtube?.close();
});

/** Cold: forceRefresh skips the extractor's cache, so every call goes to the platform. */
async function coldExtracts(n: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const c = CASES[i % CASES.length] as (typeof CASES)[number];
    const started = performance.now();
    const t = await client.getTranscript(
      extractorV1.GetTranscriptRequest.fromPartial({
        videoId: c.videoId,
        language: c.language,
        forceRefresh: true,
      }),
    );
    times.push(performance.now() - started);
    expect(t.segments.length).toBeGreaterThan(0);
  }
  return times;
}

const askedAsCaptionClient = (name: string) =>
  youtube.requests.filter((r) => r.endpoint === 'player' && r.clientName === name && !r.query.$fields).length;

function sample(text: string, name: string, labels: Record<string, string>): number {
  let total = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!match || match[1] !== name) continue;
    if (Object.entries(labels).every(([k, v]) => (match[2] ?? '').includes(`${k}="${v}"`)))
      total += Number(match[3]);
  }
  return total;
}

describe('extractor with a client retired mid-run', () => {
  it('VISIONOS retired: 25/25 succeed, VISIONOS asked at most 5 times, last 10 under 2.6 x, /metrics by outcome', async () => {
    await coldExtracts(2); // running, VISIONOS answering
    youtube.reset();
    youtube.retireClient('VISIONOS');
    youtube.setLatency(ANSWER_MS);
    const times = await coldExtracts(25);
    expect(times).toHaveLength(25);
    expect(askedAsCaptionClient('VISIONOS')).toBeGreaterThan(0);
    expect(askedAsCaptionClient('VISIONOS')).toBeLessThanOrEqual(5);
    const last10 = [...times.slice(-10)].sort((a, b) => a - b);
    const median = ((last10[4] as number) + (last10[5] as number)) / 2;
    console.info(`extractor, VISIONOS retired: median of the last 10 ${median.toFixed(0)} ms`);
    expect(median).toBeLessThan(2.6 * ANSWER_MS);

    const text = await (await fetch(metrics.url)).text();
    const rejected = sample(text, 'subx_upstream_requests_total', {
      component: 'extractor',
      client: 'VISIONOS',
      upstream_endpoint: 'player',
      outcome: 'client_rejected',
    });
    expect(rejected).toBe(askedAsCaptionClient('VISIONOS'));
  });

  it('ANDROID retired as well: extracts still succeed through IOS', async () => {
    youtube.reset();
    youtube.retireClient('ANDROID');
    await coldExtracts(6);
    expect(askedAsCaptionClient('IOS')).toBe(6);
    expect(askedAsCaptionClient('ANDROID')).toBeLessThanOrEqual(1);
  });
});
