/**
 * Batch/playlist fan-out on a real Kafka broker: gateway fan-outs (services/gateway) publish jobs,
 * extractor workers (services/extractor) with real extraction services against the fake YouTube
 * answer them, results come back to the gateway that asked. Faults: a worker killed mid-job, a
 * worker killed after publishing its result but before committing the job (duplicate result), a
 * result arriving after the deadline, poison jobs.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { extractJobV1 } from '@subx/contracts';
import { dlqTopic } from '@subx/ports';
import type { DeliveredMessage, EventBus, KafkaEventBus } from '@subx/ports';
import { brokerList, describeWithEngine } from '@subx/testing/engines';
import { startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import type { ExtractionService } from '../../services/extractor/src/extraction-service.ts';
import { startExtractWorker } from '../../services/extractor/src/jobs/extract-worker.ts';
import type { ExtractWorker } from '../../services/extractor/src/jobs/extract-worker.ts';
import { createKafkaFanOut } from '@subx/fanout';
import type { KafkaFanOut } from '@subx/fanout';
import type { FanOutOutcome, FanOutRequest } from '@subx/fanout';
import { realExtraction, silentLogger, syntheticVideos, testKafkaBus, uniqueTopics } from './support.ts';

const clock = { now: () => Date.now() };

function request(ids: readonly string[], overrides: Partial<FanOutRequest> = {}): FanOutRequest {
  return {
    requestId: `req-${randomUUID()}`,
    jobs: ids.map((videoId) => ({ videoId, language: 'en', include: [], translate: false })),
    totalTimeoutMs: 30_000,
    itemTimeoutMs: 30_000,
    ...overrides,
  };
}

const summary = (outcomes: FanOutOutcome[]) =>
  outcomes.map((o) => (o.ok ? `ok:${o.transcript.videoId}` : `error:${o.error.code}`));

/** Gateways and workers on one broker, each with its own client (as separate processes would be). */
async function startCluster(
  brokers: string[],
  yt: FakeYouTube,
  options: {
    gateways: number;
    workers: number;
    /** Jobs each worker member runs at once (default: the worker's). */
    concurrency?: number;
    /** Wraps worker i's extraction service and bus (fault injection). */
    wrap?: (
      i: number,
      parts: { extraction: ExtractionService; bus: EventBus },
    ) => {
      extraction?: ExtractionService;
      bus?: EventBus;
      clock?: { now(): number };
    };
  },
) {
  const topics = uniqueTopics('fanout');
  const buses: KafkaEventBus[] = [];
  const closers: (() => Promise<void>)[] = [];
  const gateways: KafkaFanOut[] = [];
  const group = `workers-${randomUUID()}`;
  for (let i = 0; i < options.gateways; i++) {
    // The first client to ensure the topics creates them: 8 partitions, 2 members per worker.
    const bus = testKafkaBus(brokers, `gateway-${i}`, 8);
    buses.push(bus);
    const fanOut = createKafkaFanOut({
      bus,
      instanceId: `gw-${i}-${randomUUID().slice(0, 8)}`,
      clock,
      logger: silentLogger,
      jobsTopic: topics.jobs,
      resultsTopic: topics.results,
      workersGroupId: group,
    });
    await fanOut.start();
    gateways.push(fanOut);
  }
  const workers: ExtractWorker[] = [];
  const calls: string[][] = [];
  for (let i = 0; i < options.workers; i++) {
    const bus = testKafkaBus(brokers, `worker-${i}`, 8);
    buses.push(bus);
    const real = realExtraction(yt.url);
    closers.push(real.close);
    const seen: string[] = [];
    calls.push(seen);
    const counting: ExtractionService = {
      ...real.extraction,
      getTranscript: (req) => {
        seen.push(req.videoId);
        return real.extraction.getTranscript(req);
      },
    };
    const wrapped = options.wrap?.(i, { extraction: counting, bus }) ?? {};
    workers.push(
      await startExtractWorker({
        bus: wrapped.bus ?? bus,
        extraction: wrapped.extraction ?? counting,
        logger: silentLogger,
        clock: wrapped.clock ?? clock,
        groupId: group,
        members: 2,
        ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
        topic: topics.jobs,
        resultsTopic: topics.results,
      }),
    );
  }
  return {
    topics,
    gateways,
    workers,
    calls,
    buses,
    async close() {
      await Promise.allSettled(gateways.map((g) => g.stop()));
      await Promise.allSettled(workers.map((w) => w.stop()));
      await Promise.allSettled(buses.map((b) => b.close()));
      await Promise.allSettled(closers.map((c) => c()));
    },
  };
}

describeWithEngine('kafka', 'Kafka fan-out across services (real broker)', (brokersCsv) => {
  const brokers = brokerList(brokersCsv);
  const videos = syntheticVideos(16);
  let yt: FakeYouTube;

  beforeAll(async () => {
    yt = await startFakeYouTube({ routes: videos.routes });
  });
  afterAll(async () => {
    await yt?.close();
  });

  it('2 gateways × 2 workers: every result reaches the gateway that asked, in input order, none lost', async () => {
    const cluster = await startCluster(brokers, yt, { gateways: 2, workers: 2 });
    try {
      const ids = videos.ids;
      // Four requests per gateway, overlapping videos, plus failures the extractor reports.
      const plans = [0, 1].flatMap((g) =>
        [0, 1, 2, 3].map((r) => {
          const start = (g * 4 + r * 3) % ids.length;
          const picked = [...ids, ...ids].slice(start, start + 3 + r);
          if (r === 1) picked.splice(1, 0, videoIds.private);
          if (r === 2) picked.push(videoIds.noCaptions);
          return { gateway: g, ids: picked };
        }),
      );
      const answers = await Promise.all(plans.map((p) => cluster.gateways[p.gateway]!.run(request(p.ids))));

      plans.forEach((plan, i) => {
        expect(summary(answers[i]!)).toEqual(
          plan.ids.map((id) =>
            id === videoIds.private
              ? 'error:VIDEO_UNAVAILABLE'
              : id === videoIds.noCaptions
                ? 'error:NO_SUBTITLES'
                : `ok:${id}`,
          ),
        );
      });
      const first = answers[0]![0]!;
      expect(first.ok && first.transcript.segments.length).toBeGreaterThan(0);
      expect(first.ok && first.transcript.metadata?.title).toBeTruthy();

      const items = (g: number) => plans.filter((p) => p.gateway === g).reduce((n, p) => n + p.ids.length, 0);
      for (const g of [0, 1]) {
        const stats = cluster.gateways[g]!.stats();
        expect(stats).toMatchObject({ published: items(g), accepted: items(g), duplicates: 0, malformed: 0 });
        // Each gateway also read (and ignored) every result meant for the other one.
        await expect.poll(() => cluster.gateways[g]!.stats().foreign, { timeout: 10_000 }).toBe(items(1 - g));
        expect(cluster.gateways[g]!.pendingCount()).toBe(0);
      }
      // Both workers took part (the 16 video keys spread over both members' partitions).
      expect(cluster.calls[0]!.length).toBeGreaterThan(0);
      expect(cluster.calls[1]!.length).toBeGreaterThan(0);
      expect(cluster.calls[0]!.length + cluster.calls[1]!.length).toBe(items(0) + items(1));
    } finally {
      await cluster.close();
    }
  });

  it('a worker killed mid-job does not lose the item: the other worker gets it after the rebalance', async () => {
    const target = videos.ids[3]!;
    let crashed = false;
    let hungIn = -1;
    const started = Promise.withResolvers<number>();
    const cluster = await startCluster(brokers, yt, {
      gateways: 1,
      workers: 2,
      wrap: (i, { extraction }) => ({
        extraction: {
          ...extraction,
          getTranscript: (req) => {
            if (req.videoId === target && !crashed) {
              hungIn = i;
              started.resolve(i);
              return new Promise(() => {}); // the process "dies" here
            }
            return extraction.getTranscript(req);
          },
        },
      }),
    });
    try {
      const ids = [videos.ids[1]!, target, videos.ids[5]!];
      const running = cluster.gateways[0]!.run(request(ids));
      const victim = await started.promise;
      crashed = true;
      await cluster.workers[victim]!.crash();
      const outcomes = await running;
      expect(summary(outcomes)).toEqual(ids.map((id) => `ok:${id}`));
      expect(hungIn).toBe(victim);
      expect(cluster.calls[1 - victim]).toContain(target);
      // Exactly one accepted result per item. (A job the victim had answered but not yet committed
      // on another partition is redelivered too; its second result counts as a duplicate.)
      expect(cluster.gateways[0]!.stats()).toMatchObject({ published: 3, accepted: 3, malformed: 0 });
    } finally {
      await cluster.close();
    }
  });

  it('a worker killed after publishing but before committing: the redelivered job’s second result is ignored', async () => {
    const target = videos.ids[7]!;
    let armed = true;
    const crashOf: ((() => Promise<void>) | null)[] = [null, null];
    const cluster = await startCluster(brokers, yt, {
      gateways: 1,
      workers: 2,
      // One job at a time, so item 1 starts only after item 0's crash (see below).
      concurrency: 1,
      wrap: (i, { bus }) => ({
        bus: {
          ...bus,
          subscribe: (o) => bus.subscribe(o),
          ensureTopics: (t) => bus.ensureTopics(t),
          publish: async (topic, messages) => {
            await bus.publish(topic, messages);
            if (armed) {
              armed = false;
              void crashOf[i]!();
              return new Promise<void>(() => {}); // dies before the job's offset is committed
            }
          },
        },
      }),
    });
    cluster.workers.forEach((w, i) => (crashOf[i] = () => w.crash()));
    try {
      // The same video twice: one partition, in order. Item 1 keeps the request open while the
      // redelivered job of item 0 is answered a second time by the surviving worker.
      const outcomes = await cluster.gateways[0]!.run(request([target, target]));
      expect(summary(outcomes)).toEqual([`ok:${target}`, `ok:${target}`]);
      const stats = cluster.gateways[0]!.stats();
      // One outcome per item, so one charge per success; the second result of item 0 is ignored.
      expect(stats).toMatchObject({ published: 2, accepted: 2, duplicates: 1, late: 0 });
      expect(cluster.calls.flat()).toEqual([target, target, target]);
    } finally {
      await cluster.close();
    }
  });

  it('results after the deadline are dropped without error; the request answers TIMEOUT on time', async () => {
    // Worker 0's clock runs 20 s behind: it thinks the job is still alive and answers late.
    const late = videos.ids[10]!;
    const cluster = await startCluster(brokers, yt, {
      gateways: 1,
      workers: 1,
      wrap: (_i, { extraction }) => ({
        clock: { now: () => Date.now() - 20_000 },
        extraction: {
          ...extraction,
          getTranscript: async (req) => {
            if (req.videoId === late) await new Promise((r) => setTimeout(r, 2_500));
            return extraction.getTranscript(req);
          },
        },
      }),
    });
    try {
      const ids = [videos.ids[9]!, late];
      const begun = performance.now();
      const outcomes = await cluster.gateways[0]!.run(
        request(ids, { totalTimeoutMs: 1_500, itemTimeoutMs: 10_000 }),
      );
      const elapsed = performance.now() - begun;
      expect(summary(outcomes)).toEqual([`ok:${ids[0]}`, 'error:TIMEOUT']);
      expect(elapsed).toBeLessThan(4_000);
      await expect.poll(() => cluster.gateways[0]!.stats().late, { timeout: 15_000 }).toBe(1);
      expect(cluster.gateways[0]!.pendingCount()).toBe(0);
      // The gateway keeps working after the late result.
      expect(summary(await cluster.gateways[0]!.run(request([videos.ids[11]!])))).toEqual([
        `ok:${videos.ids[11]}`,
      ]);
    } finally {
      await cluster.close();
    }
  });

  it('poison jobs go to the dead-letter topic and the workers keep serving', async () => {
    const cluster = await startCluster(brokers, yt, { gateways: 1, workers: 2 });
    const dead: DeliveredMessage[] = [];
    const reader = await cluster.buses[0]!.subscribe({
      groupId: `dlq-${randomUUID()}`,
      topics: [dlqTopic(cluster.topics.jobs)],
      fromBeginning: true,
      handler: async (m) => void dead.push(m),
    });
    try {
      await cluster.buses[0]!.publish(cluster.topics.jobs, [
        { key: videos.ids[12]!, value: Uint8Array.from([0x0a, 0xff, 0xff, 0xff]) },
        {
          key: videos.ids[12]!,
          value: extractJobV1.ExtractJob.encode(
            extractJobV1.ExtractJob.fromPartial({ correlationId: 'x', videoId: videos.ids[12]! }),
          ).finish(),
        },
      ]);
      await expect.poll(() => dead.length, { timeout: 30_000 }).toBe(2);
      // Workers run several jobs of one partition at once: the dead letters come in either order.
      dead.sort((a, b) => Number(a.headers['x-original-offset']) - Number(b.headers['x-original-offset']));
      expect(dead.map((m) => m.headers['x-original-topic'])).toEqual([
        cluster.topics.jobs,
        cluster.topics.jobs,
      ]);
      expect(dead[0]!.headers['x-error-message']).toContain('undecodable');
      expect(dead[1]!.headers['x-error-message']).toContain('reply_to');
      // Same key, same partition: the partition is not blocked.
      const outcomes = await cluster.gateways[0]!.run(request([videos.ids[12]!]));
      expect(summary(outcomes)).toEqual([`ok:${videos.ids[12]}`]);
    } finally {
      await reader.stop();
      await cluster.close();
    }
  });

  it('bulk jobs on their own topic and group: a saturated bulk worker never delays a batch; bulk results come back on the results topic', async () => {
    const cluster = await startCluster(brokers, yt, { gateways: 1, workers: 1 });
    const bulkTopic = `${cluster.topics.jobs}.bulk`;
    const bus = testKafkaBus(brokers, 'bulk-worker', 8);
    const real = realExtraction(yt.url);
    const gate = Promise.withResolvers<void>();
    const bulkCalls: string[] = [];
    const results: extractJobV1.ExtractResult[] = [];
    let reader: Awaited<ReturnType<KafkaEventBus['subscribe']>> | undefined;
    let bulk: ExtractWorker | undefined;
    try {
      // As the extractor service starts it: one member, its own group, fewer jobs at once (here 1).
      bulk = await startExtractWorker({
        bus,
        extraction: {
          ...real.extraction,
          getTranscript: async (req) => {
            bulkCalls.push(req.videoId);
            await gate.promise;
            return real.extraction.getTranscript(req);
          },
        },
        logger: silentLogger,
        clock,
        groupId: `bulk-workers-${randomUUID()}`,
        members: 1,
        concurrency: 1,
        topic: bulkTopic,
        resultsTopic: cluster.topics.results,
      });
      reader = await bus.subscribe({
        groupId: `bulk-results-${randomUUID()}`,
        topics: [cluster.topics.results],
        handler: async (m) => {
          const result = extractJobV1.ExtractResult.decode(m.value);
          if (result.replyTo === 'job-runner') results.push(result);
        },
      });
      // One account's job: three videos, all held upstream until released; one runs at a time.
      const bulkIds = videos.ids.slice(0, 3);
      await bus.publish(
        bulkTopic,
        bulkIds.map((videoId, i) => ({
          key: videoId,
          value: extractJobV1.ExtractJob.encode(
            extractJobV1.ExtractJob.fromPartial({
              envelope: { eventId: randomUUID(), accountId: 'acc-bulk' },
              correlationId: 'job-1',
              itemIndex: i,
              videoId,
              language: 'en',
              replyTo: 'job-runner',
              deadline: new Date(Date.now() + 60_000).toISOString(),
            }),
          ).finish(),
        })),
      );
      await expect.poll(() => bulkCalls.length, { timeout: 30_000 }).toBe(1);

      // Another account's batch goes through the batch workers meanwhile, in full.
      const batchIds = videos.ids.slice(8, 11);
      expect(summary(await cluster.gateways[0]!.run(request(batchIds)))).toEqual(
        batchIds.map((id) => `ok:${id}`),
      );
      expect(cluster.calls[0]!.sort()).toEqual([...batchIds].sort());
      expect(bulkCalls).toHaveLength(1);
      expect(results).toHaveLength(0);

      gate.resolve();
      await expect.poll(() => results.length, { timeout: 30_000 }).toBe(bulkIds.length);
      expect(results.map((r) => r.itemIndex).sort()).toEqual([0, 1, 2]);
      for (const r of results) expect(r).toMatchObject({ correlationId: 'job-1', success: true });
      expect(results.find((r) => r.itemIndex === 0)!.segments.length).toBeGreaterThan(0);
      // The batch workers never saw a bulk video.
      expect(cluster.calls[0]!.some((id) => bulkIds.includes(id))).toBe(false);
    } finally {
      gate.resolve();
      await reader?.stop();
      await bulk?.stop();
      await bus.close();
      await real.close();
      await cluster.close();
    }
  });
});
