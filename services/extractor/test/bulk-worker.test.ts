/**
 * The extractor service runs the bulk workers beside the batch workers: started as
 * main.ts and the embedded launcher of `npm start` start it, it answers a job published on the bulk
 * topic, with the real extraction against the fake YouTube, on the results topic; on the in-process
 * bus and on a real broker. EXTRACT_WORKERS_ENABLED turns both kinds of worker on and off together.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { commonV1, extractJobV1 } from '@subx/contracts';
import { createInProcessEventBus, createKafkaEventBus } from '@subx/ports';
import type { DeliveredMessage, EventBus } from '@subx/ports';
import { createLogger } from '@subx/service-kit';
import { FAST_KAFKA_TIMINGS, brokerList, describeWithEngine } from '@subx/testing/engines';
import { startFakeYouTube, videoIds, type FakeYouTube } from '@subx/testing/fake-youtube';
import { startTestExtractor, type TestExtractor } from './fixtures/extractor-service.ts';

const logger = createLogger({ service: 'extractor-test', level: 'silent' });

/** Names of one run, so that they come from the configuration and runs on one broker never meet. */
function names() {
  const id = randomUUID().slice(0, 8);
  return {
    EXTRACT_JOBS_TOPIC: `t.extract.jobs.${id}`,
    EXTRACT_RESULTS_TOPIC: `t.extract.results.${id}`,
    EXTRACT_BULK_JOBS_TOPIC: `t.extract.bulk-jobs.${id}`,
    EXTRACT_WORKERS_GROUP: `t-workers-${id}`,
    EXTRACT_BULK_WORKERS_GROUP: `t-bulk-workers-${id}`,
  };
}

function bulkWorkerSuite(name: string, openBus: () => EventBus) {
  describe(name, () => {
    let youtube: FakeYouTube;
    let bus: EventBus | undefined;
    let extractor: TestExtractor | undefined;

    beforeAll(async () => {
      youtube = await startFakeYouTube();
    });
    afterAll(async () => {
      await youtube?.close();
    });
    afterEach(async () => {
      await extractor?.stop();
      extractor = undefined;
      await bus?.close();
      bus = undefined;
    });

    async function start(env: Record<string, string>) {
      bus = openBus();
      extractor = await startTestExtractor({
        env,
        youtubeEnv: { YOUTUBE_BASE_URL: youtube.url, YOUTUBE_RETRIES: '0' },
        bus,
        logger,
        stopTimeoutMs: 2_000,
      });
      return bus;
    }

    it('answers a job published on the bulk topic on the results topic, in a group of its own', async () => {
      const n = names();
      const bus = await start({
        ...n,
        EXTRACT_BULK_WORKER_MEMBERS: '1',
        EXTRACT_BULK_WORKER_CONCURRENCY: '2',
      });
      await expect
        .poll(() => bus.hasActiveMembers(n.EXTRACT_BULK_WORKERS_GROUP), { timeout: 20_000 })
        .toBe(true);
      await expect.poll(() => bus.hasActiveMembers(n.EXTRACT_WORKERS_GROUP), { timeout: 20_000 }).toBe(true);
      const results: DeliveredMessage[] = [];
      const reader = await bus.subscribe({
        groupId: `results-reader-${randomUUID()}`,
        topics: [n.EXTRACT_RESULTS_TOPIC],
        handler: async (m) => void results.push(m),
      });
      try {
        await bus.publish(n.EXTRACT_BULK_JOBS_TOPIC, [
          {
            key: videoIds.manualAndAuto,
            value: extractJobV1.ExtractJob.encode(
              extractJobV1.ExtractJob.fromPartial({
                envelope: { eventId: randomUUID(), accountId: 'acc-bulk', idempotencyKey: 'job-1' },
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
        await expect.poll(() => results.length, { timeout: 30_000 }).toBe(1);
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
      await extractor!.stop();
      extractor = undefined;
      await expect
        .poll(() => bus.hasActiveMembers(n.EXTRACT_BULK_WORKERS_GROUP), { timeout: 20_000 })
        .toBe(false);
    });

    it('runs no bulk workers when EXTRACT_WORKERS_ENABLED is false, as no batch workers', async () => {
      const n = names();
      const bus = await start({ ...n, EXTRACT_WORKERS_ENABLED: 'false' });
      expect(await bus.hasActiveMembers(n.EXTRACT_BULK_WORKERS_GROUP)).toBe(false);
      expect(await bus.hasActiveMembers(n.EXTRACT_WORKERS_GROUP)).toBe(false);
    });
  });
}

bulkWorkerSuite('extractor service: bulk workers (in-process bus)', () =>
  createInProcessEventBus({ retryBackoff: { initialMs: 5, maxMs: 20 } }),
);

describeWithEngine('kafka', 'extractor service: bulk workers (real broker)', (brokers) => {
  bulkWorkerSuite('on Kafka', () =>
    createKafkaEventBus({
      brokers: brokerList(brokers),
      clientId: 'extractor-bulk-test',
      ...FAST_KAFKA_TIMINGS,
    }),
  );
});
