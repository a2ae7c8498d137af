/**
 * Shared pieces of the cross-service system tests and the fan-out benchmark: Kafka buses tuned for
 * quick rebalances, unique topic names (the broker is shared by every test run), synthetic
 * fake-YouTube videos, and real extraction services pointed at the fake.
 */
import { randomUUID } from 'node:crypto';
import { createExtractionService } from '../../services/extractor/src/extraction-service.ts';
import type { ExtractionService } from '../../services/extractor/src/extraction-service.ts';
import {
  createInMemoryDocumentStore,
  createInMemoryKeyValueStore,
  createJsonCache,
  createKafkaEventBus,
} from '@subx/ports';
import type { EventBus, KafkaEventBus, ValueSchemaIds } from '@subx/ports';
import { createLogger } from '@subx/service-kit';
import { loadAiConfig, startAiService } from '../../services/ai/src/index.ts';
import type { RunningAiService } from '../../services/ai/src/index.ts';
import { loadExtractorConfig, startExtractorService } from '../../services/extractor/src/index.ts';
import type { RunningExtractorService } from '../../services/extractor/src/index.ts';
import { loadConfig as loadGatewayConfig } from '../../services/gateway/src/config.ts';
import { startGateway } from '../../services/gateway/src/start-gateway.ts';
import { loadJobServiceConfig, startJobService } from '../../services/jobs/src/index.ts';
import type { RunningJobService } from '../../services/jobs/src/index.ts';
import type { RunningGateway } from '../../services/gateway/src/start-gateway.ts';
import { FAST_KAFKA_TIMINGS } from '@subx/testing/engines';
import { defaultRoutes, loadFixture, videoIds } from '@subx/testing/fake-youtube';
import { startFakeOpenAi, type FakeOpenAi } from '@subx/testing/fake-openai';
import type { RouteTable, VideoRoute } from '@subx/testing/fake-youtube';
import { YouTubeClient, loadYouTubeConfig } from '@subx/youtube';

export const silentLogger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};

/** Short group timings so joins, leaves and rebalances take a second or two, not 30 s. */
export function testKafkaBus(
  brokers: string[],
  clientId: string,
  partitions = 3,
  valueSchemaIds?: ValueSchemaIds,
): KafkaEventBus {
  return createKafkaEventBus({
    brokers,
    clientId,
    partitions,
    ...(valueSchemaIds ? { valueSchemaIds } : {}),
    ...FAST_KAFKA_TIMINGS,
    consumer: { ...FAST_KAFKA_TIMINGS.consumer, maxWaitTimeInMs: 20 },
  });
}

/** Topic names of one test run, so runs sharing a broker never see each other's messages. */
export function uniqueTopics(label: string) {
  const suffix = `${label}.${randomUUID().slice(0, 8)}`;
  return {
    jobs: `t.extract.jobs.${suffix}`,
    results: `t.extract.results.${suffix}`,
    usage: `t.billing.credit-usage.${suffix}`,
  };
}

/**
 * `count` synthetic videos that answer like the recorded manual+asr English video (a transcript is
 * two upstream requests), each under its own 11-character id.
 */
export function syntheticVideos(
  count: number,
  prefix = 'sysvid',
): { ids: string[]; routes: Partial<RouteTable> } {
  const source = videoIds.manualAndAuto;
  const template = defaultRoutes().videos[source]!;
  const clone = (ref: Parameters<typeof loadFixture>[0], id: string) => {
    const body = loadFixture(ref).body.replaceAll(source, id);
    return { inline: JSON.parse(body) as unknown };
  };
  const ids: string[] = [];
  const videos: Record<string, VideoRoute> = {};
  for (let i = 0; i < count; i++) {
    const id = `${prefix}${String(i).padStart(11 - prefix.length, '0')}`.slice(0, 11);
    ids.push(id);
    videos[id] = {
      ...template,
      player: Object.fromEntries(
        Object.entries(template.player).map(([client, ref]) => [client, clone(ref, id)]),
      ) as VideoRoute['player'],
      ...(template.next ? { next: clone(template.next, id) } : {}),
      note: `synthetic copy of ${source}`,
    } as VideoRoute;
  }
  return { ids, routes: { videos } };
}

/** A real extraction service (YouTube client + cache) against the fake at `baseUrl`. */
export function realExtraction(baseUrl: string): { extraction: ExtractionService; close(): Promise<void> } {
  const youtube = YouTubeClient.create(
    loadYouTubeConfig({ YOUTUBE_BASE_URL: baseUrl, YOUTUBE_RETRY_BASE_MS: '1' }),
  );
  const extraction = createExtractionService({
    youtube,
    cache: createJsonCache(createInMemoryKeyValueStore(), { prefix: 'extractor' }),
    ttl: { transcriptMs: 86_400_000, validateMs: 3_600_000, playlistMs: 600_000 },
  });
  return { extraction, close: () => youtube.close() };
}

export interface InProcessSystem {
  extractor: RunningExtractorService;
  ai: RunningAiService | null;
  gateway: RunningGateway;
  /** The job service behind the gateway's jobs, watches and webhook-secret routes. */
  jobs: RunningJobService;
  /** A pro account with `credits`, and its key. */
  apiKey: string;
  accountId: string;
  stop(): Promise<void>;
}

/**
 * The real extractor (and optionally the AI service, local engine) and the job service on loopback
 * gRPC ports and the gateway composed as main.ts does, against the fake YouTube at `youtubeUrl`, on embedded adapters.
 * Gateway requests go through `gateway.app.inject`.
 */
export async function startInProcessSystem(options: {
  youtubeUrl: string;
  bus: EventBus;
  ai?: boolean;
  fanOut?: 'bus' | 'direct';
  credits?: number;
  /** The gateway's environment (EMBEDDINGS_*, ACCESS_PRICING_JSON, ...). */
  gatewayEnv?: Record<string, string>;
  /** More of the gateway's own configuration (e.g. GRPC_DEADLINE_MS for a slow engine). */
  gatewayConfig?: Record<string, string>;
  /** More extractor environment (e.g. OPENAI_BASE_URL and OPENAI_API_KEY for model translation). */
  extractorEnv?: Record<string, string>;
  /** More YouTube client environment (YOUTUBE_TIMEOUT_MS, ...). */
  youtubeEnv?: Record<string, string>;
}): Promise<InProcessSystem> {
  const logger = createLogger({ service: 'system-test', level: 'silent' });
  const kv = createInMemoryKeyValueStore();
  const extractor = await startExtractorService({
    config: loadExtractorConfig({ GRPC_PORT: '0', ...options.extractorEnv }),
    youtube: loadYouTubeConfig({
      YOUTUBE_BASE_URL: options.youtubeUrl,
      YOUTUBE_RETRY_BASE_MS: '1',
      ...options.youtubeEnv,
    }),
    kv,
    bus: options.bus,
    logger,
    host: '127.0.0.1',
  });
  const ai = options.ai
    ? await startAiService({
        config: loadAiConfig({
          GRPC_PORT: '0',
          EXTRACTOR_GRPC_ADDR: `127.0.0.1:${extractor.port}`,
          // No comments service in these systems: analysis is not under test here.
          COMMENTS_GRPC_ADDR: '127.0.0.1:1',
        }),
        kv,
        logger,
        host: '127.0.0.1',
      })
    : null;
  // One store and key-value store for the gateway and the job service, as in `npm start`.
  const store = createInMemoryDocumentStore();
  const gatewayKv = createInMemoryKeyValueStore();
  const jobs = await startJobService({
    config: loadJobServiceConfig(
      {
        GRPC_PORT: '0',
        LOG_LEVEL: 'silent',
        EXTRACTOR_GRPC_ADDR: `127.0.0.1:${extractor.port}`,
        ...options.gatewayEnv,
        ...options.gatewayConfig,
      },
      { embedded: true },
    ),
    store,
    kv: gatewayKv,
    bus: options.bus,
    logger,
    fanOut: options.fanOut ?? 'bus',
    host: '127.0.0.1',
    pepper: 'in-process-system-pepper-0123456789abcdef',
  });
  const gateway = await startGateway({
    config: loadGatewayConfig({
      PORT: '0',
      // A free admin port too: a suite may run more than one system.
      ADMIN_PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      EXTRACTOR_GRPC_ADDR: `127.0.0.1:${extractor.port}`,
      JOBS_GRPC_ADDR: `127.0.0.1:${jobs.port}`,
      ...(ai ? { AI_GRPC_ADDR: `127.0.0.1:${ai.port}` } : {}),
      ...options.gatewayEnv,
      ...options.gatewayConfig,
    }),
    env: options.gatewayEnv ?? {},
    embedded: true,
    store,
    kv: gatewayKv,
    bus: options.bus,
    logger,
    fanOut: options.fanOut ?? 'bus',
    instanceId: `gw-${randomUUID().slice(0, 8)}`,
  });
  const created = await gateway.access.accounts.createAccount({
    tier: 'pro',
    credits: options.credits ?? 100,
  });
  return {
    extractor,
    ai,
    gateway,
    apiKey: created.apiKey,
    accountId: created.account._id,
    jobs,
    async stop() {
      await gateway.stop();
      await jobs.stop();
      await ai?.stop();
      await extractor.stop(2_000);
    },
  };
}

/**
 * A stand-in OpenAI-compatible model that translates segments by prefixing each with `prefix`,
 * keeping their count and order; `given` collects the segments of every request.
 */
export async function startPrefixTranslator(prefix: string, given: string[][] = []): Promise<FakeOpenAi> {
  return startFakeOpenAi({
    respond: (request) => {
      const user = request.body?.messages?.find((m) => m.role === 'user')?.content ?? '{}';
      const { segments = [] } = JSON.parse(user) as { segments?: string[] };
      given.push(segments);
      return { json: { segments: segments.map((text) => `${prefix}${text}`) } };
    },
  });
}
