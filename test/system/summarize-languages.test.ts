/**
 * Summaries of videos without English captions, through the real chain: gateway → AI service
 * (local engine) → extractor (ValidateVideo to choose the track, GetTranscript to read it) → the
 * fake YouTube replaying recorded players. The response says which language was read, and a
 * repeated request by the same user is free even with an empty balance.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createInMemoryDocumentStore,
  createInMemoryKeyValueStore,
  createInProcessEventBus,
} from '@subx/ports';
import { createLogger } from '@subx/service-kit';
import { startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import { loadYouTubeConfig } from '@subx/youtube';
import { loadAiConfig, startAiService } from '../../services/ai/src/index.ts';
import type { RunningAiService } from '../../services/ai/src/index.ts';
import { loadExtractorConfig, startExtractorService } from '../../services/extractor/src/index.ts';
import type { RunningExtractorService } from '../../services/extractor/src/index.ts';
import { loadConfig } from '../../services/gateway/src/config.ts';
import { startGateway } from '../../services/gateway/src/start-gateway.ts';
import type { RunningGateway } from '../../services/gateway/src/start-gateway.ts';

describe('summarize picks the best caption track', () => {
  const bus = createInProcessEventBus();
  let yt: FakeYouTube;
  let extractor: RunningExtractorService;
  let ai: RunningAiService;
  let gateway: RunningGateway;
  let apiKey = '';
  let accountId = '';

  beforeAll(async () => {
    yt = await startFakeYouTube();
    const logger = createLogger({ service: 'system-test', level: 'silent' });
    const kv = createInMemoryKeyValueStore();
    extractor = await startExtractorService({
      config: loadExtractorConfig({ GRPC_PORT: '0' }),
      youtube: loadYouTubeConfig({ YOUTUBE_BASE_URL: yt.url, YOUTUBE_RETRY_BASE_MS: '1' }),
      kv,
      bus,
      logger,
      host: '127.0.0.1',
    });
    ai = await startAiService({
      config: loadAiConfig({
        GRPC_PORT: '0',
        EXTRACTOR_GRPC_ADDR: `127.0.0.1:${extractor.port}`,
        COMMENTS_GRPC_ADDR: '127.0.0.1:1',
      }),
      kv,
      logger,
      host: '127.0.0.1',
    });
    gateway = await startGateway({
      config: loadConfig({
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
        EXTRACTOR_GRPC_ADDR: `127.0.0.1:${extractor.port}`,
        AI_GRPC_ADDR: `127.0.0.1:${ai.port}`,
      }),
      env: {},
      embedded: true,
      store: createInMemoryDocumentStore(),
      kv: createInMemoryKeyValueStore(),
      bus,
      logger,
      fanOut: 'direct',
    });
    const created = await gateway.access.accounts.createAccount({ tier: 'pro', credits: 100 });
    apiKey = created.apiKey;
    accountId = created.account._id;
  });
  afterAll(async () => {
    await gateway?.stop();
    await ai?.stop();
    await extractor?.stop(2_000);
    await bus.close();
    await yt?.close();
  });

  const summarize = (payload: Record<string, unknown>) =>
    gateway.app.inject({
      method: 'POST',
      url: '/api/v1/summarize',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      payload,
    });

  it('a video with French auto-generated captions only is summarised from them', async () => {
    const res = await summarize({ video_url: `https://youtu.be/${videoIds.autoOnlyFrench}` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ language: 'fr', cached: false });
    expect(res.json().summary.length).toBeGreaterThan(0);
    expect(res.json().credits_used).toBeGreaterThan(0);
  });

  it('a German video (manual and auto-generated de) is read in German; English is not required', async () => {
    const res = await summarize({ video_url: `https://youtu.be/${videoIds.germanNamedTrack}` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().language).toMatch(/^de/);
  });

  it('an explicit language that the video lacks is LANGUAGE_NOT_AVAILABLE, charged nothing', async () => {
    const before = (await gateway.access.accounts.get(accountId))!.credits;
    const res = await summarize({ video_url: `https://youtu.be/${videoIds.autoOnlyFrench}`, language: 'ja' });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('LANGUAGE_NOT_AVAILABLE');
    expect((await gateway.access.accounts.get(accountId))!.credits).toBe(before);
  });

  it('the same user again: cached, 0 credits, even with an empty balance', async () => {
    await gateway.access.accounts.update(accountId, { credits: 0 });
    const res = await summarize({ video_url: `https://youtu.be/${videoIds.autoOnlyFrench}` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ language: 'fr', cached: true, credits_used: 0 });
  });
});
