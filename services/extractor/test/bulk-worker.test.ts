/**
 * The extractor service runs the bulk workers beside the batch workers (issue 23): on the
 * in-process bus of `npm start`, the service started as main.ts and the embedded launcher start it
 * answers a job published on the bulk topic, with the real extraction against the fake YouTube,
 * on the results topic; and EXTRACT_WORKERS_ENABLED turns both kinds of worker on and off together.
 */
import { afterEach, beforeAll, afterAll, describe, expect, it } from 'vitest';
import { commonV1, extractJobV1 } from '@subx/contracts';
import { createInMemoryKeyValueStore, createInProcessEventBus } from '@subx/ports';
import type { DeliveredMessage, InProcessEventBus } from '@subx/ports';
import { createLogger } from '@subx/service-kit';
import { startFakeYouTube, videoIds, type FakeYouTube } from '@subx/testing/fake-youtube';
import { loadYouTubeConfig } from '@subx/youtube';
import { loadExtractorConfig, startExtractorService, type RunningExtractorService } from '../src/index.ts';

const logger = createLogger({ service: 'extractor-test', level: 'silent' });
// Names of this test's own, so that they come from the configuration and not the defaults.
const names = {
  EXTRACT_JOBS_TOPIC: 't.extract.jobs',
  EXTRACT_RESULTS_TOPIC: 't.extract.results',
  EXTRACT_BULK_JOBS_TOPIC: 't.extract.bulk-jobs',
  EXTRACT_WORKERS_GROUP: 't-workers',
  EXTRACT_BULK_WORKERS_GROUP: 't-bulk-workers',
};

describe('extractor service: bulk workers', () => {
  let youtube: FakeYouTube;
  let bus: InProcessEventBus;
  let service: RunningExtractorService | undefined;

  beforeAll(async () => {
    youtube = await startFakeYouTube();
  });
  afterAll(async () => {
    await youtube?.close();
  });
  afterEach(async () => {
    await service?.stop(1_000);
    service = undefined;
    await bus?.close();
  });

  async function start(env: Record<string, string>) {
    bus = createInProcessEventBus({ retryBackoff: { initialMs: 5, maxMs: 20 } });
    service = await startExtractorService({
      config: loadExtractorConfig({ GRPC_PORT: '0', ...names, ...env }),
      youtube: loadYouTubeConfig({ YOUTUBE_BASE_URL: youtube.url, YOUTUBE_RETRIES: '0' }),
      kv: createInMemoryKeyValueStore(),
      bus,
      logger,
      host: '127.0.0.1',
    });
  }

  it('answers a job published on the bulk topic on the results topic, in a group of its own', async () => {
    await start({ EXTRACT_BULK_WORKER_MEMBERS: '1', EXTRACT_BULK_WORKER_CONCURRENCY: '2' });
    expect(await bus.hasActiveMembers(names.EXTRACT_BULK_WORKERS_GROUP)).toBe(true);
    expect(await bus.hasActiveMembers(names.EXTRACT_WORKERS_GROUP)).toBe(true);
    const results: DeliveredMessage[] = [];
    const reader = await bus.subscribe({
      groupId: 'results-reader',
      topics: [names.EXTRACT_RESULTS_TOPIC],
      handler: async (m) => void results.push(m),
    });
    try {
      await bus.publish(names.EXTRACT_BULK_JOBS_TOPIC, [
        {
          key: videoIds.manualAndAuto,
          value: extractJobV1.ExtractJob.encode(
            extractJobV1.ExtractJob.fromPartial({
              envelope: { eventId: 'e-bulk-1', accountId: 'acc-bulk', idempotencyKey: 'job-1' },
              correlationId: 'job-1',
              itemIndex: 41,
              videoId: videoIds.manualAndAuto,
              language: 'en',
              replyTo: 'gw-jobs',
              deadline: new Date(Date.now() + 60_000).toISOString(),
            }),
          ).finish(),
        },
      ]);
      await expect.poll(() => results.length, { timeout: 15_000 }).toBe(1);
      expect(results[0]!.key).toBe('gw-jobs');
      const result = extractJobV1.ExtractResult.decode(results[0]!.value);
      expect(result).toMatchObject({
        correlationId: 'job-1',
        itemIndex: 41,
        videoId: videoIds.manualAndAuto,
        replyTo: 'gw-jobs',
        success: true,
        language: 'en',
        subtitleType: commonV1.SubtitleType.SUBTITLE_TYPE_MANUAL,
      });
      expect(result.segments.length).toBeGreaterThan(0);
      expect(result.envelope?.accountId).toBe('acc-bulk');
    } finally {
      await reader.stop();
    }
    await service!.stop(1_000);
    service = undefined;
    expect(await bus.hasActiveMembers(names.EXTRACT_BULK_WORKERS_GROUP)).toBe(false);
  });

  it('runs no bulk workers when EXTRACT_WORKERS_ENABLED is false, as no batch workers', async () => {
    await start({ EXTRACT_WORKERS_ENABLED: 'false' });
    expect(await bus.hasActiveMembers(names.EXTRACT_BULK_WORKERS_GROUP)).toBe(false);
    expect(await bus.hasActiveMembers(names.EXTRACT_WORKERS_GROUP)).toBe(false);
  });
});
