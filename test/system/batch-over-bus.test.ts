/**
 * POST /api/v1/batch and GET /api/v1/playlist through the whole gateway (startGateway, the same
 * composition as main.ts) with the Kafka fan-out on the event bus, and the real extractor service
 * (gRPC for playlist listings, its Kafka worker for the jobs) against the fake YouTube. Embedded adapters (in-process bus, in-memory
 * store and counters), so it runs anywhere; the real-broker behaviour is kafka-fan-out.test.ts.
 * Checks what a client relies on: one item per input in input order, per-item errors, credits
 * charged for successes only, and one usage event for the charge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditUsageV1 } from '@subx/contracts';
import {
  createInMemoryDocumentStore,
  createInMemoryKeyValueStore,
  createInProcessEventBus,
} from '@subx/ports';
import type { DeliveredMessage, Subscription } from '@subx/ports';
import { createLogger } from '@subx/service-kit';
import { playlistIds, startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import { loadExtractorConfig, startExtractorService } from '../../services/extractor/src/index.ts';
import type { RunningExtractorService } from '../../services/extractor/src/index.ts';
import { loadConfig } from '../../services/gateway/src/config.ts';
import { startGateway } from '../../services/gateway/src/start-gateway.ts';
import type { RunningGateway } from '../../services/gateway/src/start-gateway.ts';
import { loadYouTubeConfig } from '@subx/youtube';
import { syntheticVideos } from './support.ts';

describe('batch over the event bus, through the gateway', () => {
  const bus = createInProcessEventBus({ retryBackoff: { initialMs: 5, maxMs: 20 } });
  // The synthetic playlist lists synthv00001, synthv00002, ...: these routes make them real videos.
  const videos = syntheticVideos(4, 'synthv');
  const usage: DeliveredMessage[] = [];
  let yt: FakeYouTube;
  let extractor: RunningExtractorService;
  let usageReader: Subscription;
  let gateway: RunningGateway;
  let apiKey: string;
  let accountId: string;

  beforeAll(async () => {
    yt = await startFakeYouTube({ routes: videos.routes });
    const logger = createLogger({ service: 'system-test', level: 'silent' });
    extractor = await startExtractorService({
      config: loadExtractorConfig({ GRPC_PORT: '0' }),
      youtube: loadYouTubeConfig({ YOUTUBE_BASE_URL: yt.url, YOUTUBE_RETRY_BASE_MS: '1' }),
      kv: createInMemoryKeyValueStore(),
      bus,
      logger,
      host: '127.0.0.1',
    });
    usageReader = await bus.subscribe({
      groupId: 'usage-spy',
      topics: ['billing.credit-usage.v1'],
      fromBeginning: true,
      handler: async (m) => void usage.push(m),
    });
    gateway = await startGateway({
      config: loadConfig({
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
        EXTRACTOR_GRPC_ADDR: `127.0.0.1:${extractor.port}`,
      }),
      env: {},
      embedded: true,
      store: createInMemoryDocumentStore(),
      kv: createInMemoryKeyValueStore(),
      bus,
      logger,
      fanOut: 'bus',
      instanceId: 'gw-route-test',
    });
    const created = await gateway.access.accounts.createAccount({ tier: 'pro', credits: 20 });
    apiKey = created.apiKey;
    accountId = created.account._id;
  });
  afterAll(async () => {
    await gateway?.stop();
    await usageReader?.stop();
    await extractor?.stop(2_000);
    await bus.close();
    await yt?.close();
  });

  it('answers one item per URL in input order and charges the successes only', async () => {
    const urls = [
      `https://www.youtube.com/watch?v=${videos.ids[0]}`,
      'https://example.com/not-a-video',
      `https://youtu.be/${videoIds.private}`,
      `https://www.youtube.com/shorts/${videos.ids[1]}`,
    ];
    const response = await gateway.app.inject({
      method: 'POST',
      url: '/api/v1/batch',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      payload: { urls, language: 'en' },
    });
    expect(response.statusCode).toBe(200);
    const body = response.json<{
      results: { success: boolean; video_id: string | null; error_code?: string; subtitles?: unknown[] }[];
      credits_charged: number;
      credits_details: { successful: number; failed: number; total_attempted: number };
    }>();
    expect(body.results.map((r) => [r.success, r.video_id, r.error_code ?? null])).toEqual([
      [true, videos.ids[0], null],
      [false, null, 'INVALID_URL'],
      [false, videoIds.private, 'VIDEO_UNAVAILABLE'],
      [true, videos.ids[1], null],
    ]);
    expect(body.results[0]!.subtitles!.length).toBeGreaterThan(0);
    expect(body.credits_charged).toBe(2);
    expect(body.credits_details).toEqual({ successful: 2, failed: 2, total_attempted: 4 });
    expect((await gateway.access.accounts.get(accountId))?.credits).toBe(18);

    await expect.poll(() => usage.length).toBe(1);
    const event = creditUsageV1.CreditUsage.decode(usage[0]!.value);
    expect(event).toMatchObject({ operation: 'batch', credits: 2n, successfulItems: 2, attemptedItems: 4 });
    expect(event.envelope?.accountId).toBe(accountId);
  });

  it('a playlist is listed over gRPC and its videos extracted through the same fan-out', async () => {
    const before = (await gateway.access.accounts.get(accountId))!.credits;
    const url = `https://www.youtube.com/playlist?list=${playlistIds.synthetic}`;
    const response = await gateway.app.inject({
      method: 'GET',
      url: `/api/v1/playlist?url=${encodeURIComponent(url)}&max=3`,
      headers: { 'x-api-key': apiKey },
    });
    expect(response.statusCode).toBe(200);
    const body = response.json<{
      extracted_count: number;
      results: { success: boolean; video_id: string | null; error_code?: string }[];
      credits_charged: number;
    }>();
    expect(body.extracted_count).toBe(3);
    expect(body.results.map((r) => [r.success, r.video_id])).toEqual([
      [true, 'synthv00001'],
      [true, 'synthv00002'],
      [true, 'synthv00003'],
    ]);
    expect(body.credits_charged).toBe(3);
    expect((await gateway.access.accounts.get(accountId))!.credits).toBe(before - 3);
    await expect.poll(() => usage.length).toBe(2);
    expect(creditUsageV1.CreditUsage.decode(usage[1]!.value)).toMatchObject({
      operation: 'playlist',
      credits: 3n,
    });
  });
});
