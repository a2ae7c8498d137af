/**
 * One trace across the bus: the gateway's request span → the jobs' producer span → the worker's
 * consumer span (from the job's `traceparent` header) → the gateway's span for the result (from the
 * result's header). Real broker; spans collected in memory from the OpenTelemetry SDK.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { extractJobV1 } from '@subx/contracts';
import type { DeliveredMessage } from '@subx/ports';
import { SpanKind, startTelemetry, withSpan } from '@subx/service-kit';
import type { SpanProcessor, Telemetry } from '@subx/service-kit';
import { brokerList, describeWithEngine } from '@subx/testing/engines';
import { startFakeYouTube } from '@subx/testing/fake-youtube';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import { startExtractWorker } from '../../services/extractor/src/jobs/extract-worker.ts';
import { createKafkaFanOut } from '@subx/fanout';
import { realExtraction, silentLogger, syntheticVideos, testKafkaBus, uniqueTopics } from './support.ts';

type EndedSpan = Parameters<SpanProcessor['onEnd']>[0];

describeWithEngine('kafka', 'trace context through Kafka (real broker)', (brokersCsv) => {
  const brokers = brokerList(brokersCsv);
  const ended: EndedSpan[] = [];
  let telemetry: Telemetry;
  let yt: FakeYouTube;
  const videos = syntheticVideos(2, 'trace');

  beforeAll(async () => {
    telemetry = startTelemetry({
      serviceName: 'system-test',
      instrumentations: [],
      spanProcessors: [
        {
          onStart: () => {},
          onEnd: (span) => void ended.push(span),
          forceFlush: async () => {},
          shutdown: async () => {},
        },
      ],
      env: {},
    });
    yt = await startFakeYouTube({ routes: videos.routes });
  });
  afterAll(async () => {
    await yt?.close();
    await telemetry?.shutdown();
  });

  it('the traceparent of the job reaches the worker and comes back on the result, one trace end to end', async () => {
    const topics = uniqueTopics('trace');
    const gatewayBus = testKafkaBus(brokers, 'trace-gateway');
    const workerBus = testKafkaBus(brokers, 'trace-worker');
    const real = realExtraction(yt.url);
    const workersGroupId = `trace-workers-${randomUUID()}`;
    const fanOut = createKafkaFanOut({
      bus: gatewayBus,
      instanceId: `gw-${randomUUID().slice(0, 8)}`,
      clock: { now: () => Date.now() },
      logger: silentLogger,
      jobsTopic: topics.jobs,
      resultsTopic: topics.results,
      workersGroupId,
    });
    const worker = await startExtractWorker({
      bus: workerBus,
      extraction: real.extraction,
      logger: silentLogger,
      groupId: workersGroupId,
      topic: topics.jobs,
      resultsTopic: topics.results,
    });
    const seen: { jobs: DeliveredMessage[]; results: DeliveredMessage[] } = { jobs: [], results: [] };
    const spies = await Promise.all(
      (['jobs', 'results'] as const).map((which) =>
        gatewayBus.subscribe({
          groupId: `trace-spy-${which}-${randomUUID()}`,
          topics: [topics[which]],
          fromBeginning: true,
          handler: async (m) => void seen[which].push(m),
        }),
      ),
    );
    try {
      const { outcomes, traceId, rootSpanId } = await withSpan(
        'POST /api/v1/batch',
        async (span) => ({
          outcomes: await fanOut.run({
            requestId: 'req-trace',
            jobs: [{ videoId: videos.ids[0]!, language: 'en', include: [], translate: false }],
            totalTimeoutMs: 30_000,
            itemTimeoutMs: 30_000,
          }),
          traceId: span.spanContext().traceId,
          rootSpanId: span.spanContext().spanId,
        }),
        {},
        { kind: SpanKind.SERVER },
      );
      expect(outcomes[0]?.ok).toBe(true);
      await expect.poll(() => seen.jobs.length + seen.results.length, { timeout: 15_000 }).toBe(2);

      const traceIdOf = (traceparent: string | undefined) => traceparent?.split('-')[1];
      const spanIdOf = (traceparent: string | undefined) => traceparent?.split('-')[2];
      const jobMessage = seen.jobs[0]!;
      const resultMessage = seen.results[0]!;
      const job = extractJobV1.ExtractJob.decode(jobMessage.value);
      const result = extractJobV1.ExtractResult.decode(resultMessage.value);

      expect(traceIdOf(jobMessage.headers.traceparent)).toBe(traceId);
      expect(job.envelope?.traceParent).toBe(jobMessage.headers.traceparent);
      expect(traceIdOf(resultMessage.headers.traceparent)).toBe(traceId);
      expect(result.envelope?.traceParent).toBe(resultMessage.headers.traceparent);

      // All three, not only the last to start: the worker's span ends after its handler returned,
      // which can be after the gateway has already handled the result it published.
      const names = [`${topics.jobs} publish`, `${topics.jobs} process`, `${topics.results} process`];
      await expect
        .poll(() => names.filter((name) => !ended.some((s) => s.name === name)), { timeout: 15_000 })
        .toEqual([]);
      const span = (name: string) => ended.find((s) => s.name === name)!;
      const publish = span(`${topics.jobs} publish`);
      const work = span(`${topics.jobs} process`);
      const receive = span(`${topics.results} process`);
      for (const s of [publish, work, receive]) expect(s.spanContext().traceId).toBe(traceId);
      expect(publish.parentSpanContext?.spanId).toBe(rootSpanId);
      expect(spanIdOf(jobMessage.headers.traceparent)).toBe(publish.spanContext().spanId);
      expect(work.parentSpanContext?.spanId).toBe(publish.spanContext().spanId);
      expect(spanIdOf(resultMessage.headers.traceparent)).toBe(work.spanContext().spanId);
      expect(receive.parentSpanContext?.spanId).toBe(work.spanContext().spanId);
      expect([publish.kind, work.kind, receive.kind]).toEqual([
        SpanKind.PRODUCER,
        SpanKind.CONSUMER,
        SpanKind.CONSUMER,
      ]);
    } finally {
      await Promise.allSettled(spies.map((s) => s.stop()));
      await fanOut.stop();
      await worker.stop();
      await Promise.allSettled([gatewayBus.close(), workerBus.close(), real.close()]);
    }
  });
});
