import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commonV1, extractJobV1 } from '@subx/contracts';
import type { extractorV1 } from '@subx/contracts';
import { Errors } from '@subx/errors';
import { ManualClock, createInProcessEventBus, dlqTopic, silentLogger } from '@subx/ports';
import type { DeliveredMessage, EventBus, InProcessEventBus, Subscription } from '@subx/ports';
import type { ExtractionService } from '../extraction-service.ts';
import {
  EXTRACT_BULK_JOBS_TOPIC,
  EXTRACT_BULK_WORKERS_GROUP,
  EXTRACT_JOBS_TOPIC,
  EXTRACT_RESULTS_TOPIC,
  startExtractWorker,
} from './extract-worker.ts';

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

type GetTranscript = ExtractionService['getTranscript'];

function extractionWith(getTranscript: GetTranscript): ExtractionService {
  const unused = () => Promise.reject(new Error('not used by the worker'));
  return { getTranscript, validateVideo: unused, getPlaylist: unused };
}

const transcriptOf = (req: extractorV1.GetTranscriptRequest): extractorV1.GetTranscriptResponse => ({
  videoId: req.videoId,
  language: req.language,
  subtitleType: commonV1.SubtitleType.SUBTITLE_TYPE_AUTO_GENERATED,
  source: 'captions',
  audioSeconds: 0,
  fallbackReason: '',
  upstreamReason: '',
  segments: [{ text: 'hello', start: 1, duration: 2, words: [] }],
  metadata: { title: 't', channel: 'c', channelId: 'UC1', duration: 60, uploadDate: '', thumbnailUrl: '' },
  cached: true,
  fetchedAt: '2026-01-01T00:00:00.000Z',
  segmentsJson: '',
  segmentsJsonUtf8: Buffer.alloc(0),
  headJsonUtf8: Buffer.alloc(0),
  ...(req.translate ? { translatedFrom: 'de' } : {}),
});

function job(clock: ManualClock, overrides: Partial<extractJobV1.ExtractJob> = {}): Uint8Array {
  return extractJobV1.ExtractJob.encode(
    extractJobV1.ExtractJob.fromPartial({
      envelope: { eventId: 'e1', accountId: 'acc-1', idempotencyKey: 'k1', traceParent: TRACEPARENT },
      correlationId: 'corr-1',
      itemIndex: 3,
      videoId: 'aaaaaaaaaaa',
      language: 'en',
      include: ['tags'],
      replyTopic: EXTRACT_RESULTS_TOPIC,
      replyTo: 'gw-a',
      deadline: new Date(clock.now() + 60_000).toISOString(),
      ...overrides,
    }),
  ).finish();
}

async function collect(bus: EventBus, topic: string, into: DeliveredMessage[]): Promise<Subscription> {
  return bus.subscribe({
    groupId: `collector-${topic}`,
    topics: [topic],
    handler: async (m) => void into.push(m),
  });
}

describe('extract worker (in-process bus)', () => {
  let bus: InProcessEventBus;
  let clock: ManualClock;
  const subs: Subscription[] = [];

  beforeEach(() => {
    bus = createInProcessEventBus({ retryBackoff: { initialMs: 5, maxMs: 20 } });
    clock = new ManualClock(Date.UTC(2026, 2, 1));
  });
  afterEach(async () => {
    await Promise.all(subs.splice(0).map((s) => s.stop()));
    await bus.close();
  });

  async function start(getTranscript: GetTranscript) {
    const calls: extractorV1.GetTranscriptRequest[] = [];
    subs.push(
      await startExtractWorker({
        bus,
        clock,
        logger: silentLogger,
        extraction: extractionWith((req) => {
          calls.push(req);
          return getTranscript(req);
        }),
      }),
    );
    const results: DeliveredMessage[] = [];
    subs.push(await collect(bus, EXTRACT_RESULTS_TOPIC, results));
    return { calls, results };
  }

  it('answers a job with its transcript on the reply topic, keyed by the asking gateway', async () => {
    const { calls, results } = await start(async (req) => transcriptOf(req));
    await bus.publish(EXTRACT_JOBS_TOPIC, [
      { key: 'aaaaaaaaaaa', value: job(clock, { translate: true }), headers: { traceparent: TRACEPARENT } },
    ]);
    await expect.poll(() => results.length).toBe(1);
    expect(calls[0]).toMatchObject({
      videoId: 'aaaaaaaaaaa',
      language: 'en',
      include: ['tags'],
      translate: true,
    });
    const message = results[0]!;
    expect(message.key).toBe('gw-a');
    // Without a telemetry SDK the worker passes the job's trace context on unchanged.
    expect(message.headers.traceparent).toBe(TRACEPARENT);
    expect(message.headers['x-correlation-id']).toBe('corr-1');
    const result = extractJobV1.ExtractResult.decode(message.value);
    // CloudEvents binary mode: the result's own event id and time, the job item as subject.
    expect(message.headers).toMatchObject({
      ce_specversion: '1.0',
      ce_id: result.envelope!.eventId,
      ce_time: result.envelope!.occurredAt,
      ce_source: '//subx/extractor',
      ce_type: 'com.subx.extract-result.v1',
      ce_subject: 'corr-1/3',
      ce_dataschema: 'proto:subx.events.v1.ExtractResult',
      'content-type': 'application/protobuf',
    });
    expect(result).toMatchObject({
      correlationId: 'corr-1',
      itemIndex: 3,
      videoId: 'aaaaaaaaaaa',
      replyTo: 'gw-a',
      success: true,
      language: 'en',
      subtitleType: commonV1.SubtitleType.SUBTITLE_TYPE_AUTO_GENERATED,
      segments: [{ text: 'hello', start: 1, duration: 2 }],
      cached: true,
      fetchedAt: '2026-01-01T00:00:00.000Z',
      translatedFrom: 'de',
    });
    expect(result.envelope).toMatchObject({
      accountId: 'acc-1',
      idempotencyKey: 'k1',
      traceParent: TRACEPARENT,
    });
    expect(result.envelope?.eventId).not.toBe('e1');
  });

  it('asks the mode the job names and answers where the transcript came from', async () => {
    const { calls, results } = await start(async (req) => ({
      ...transcriptOf(req),
      subtitleType: commonV1.SubtitleType.SUBTITLE_TYPE_TRANSCRIBED,
      source: 'audio',
      audioSeconds: 70,
      translatedFrom: 'en',
      translatedBy: 'model',
      languageConfidence: 'low',
    }));
    await bus.publish(EXTRACT_JOBS_TOPIC, [{ key: 'aaaaaaaaaaa', value: job(clock, { mode: 2 }) }]);
    await expect.poll(() => results.length).toBe(1);
    expect(calls[0]!.mode).toBe(2);
    expect(extractJobV1.ExtractResult.decode(results[0]!.value)).toMatchObject({
      success: true,
      subtitleType: commonV1.SubtitleType.SUBTITLE_TYPE_TRANSCRIBED,
      source: 'audio',
      audioSeconds: 70,
      translatedBy: 'model',
      languageConfidence: 'low',
    });
  });

  it('a job from a gateway that predates mode asks captions only', async () => {
    const { calls, results } = await start(async (req) => transcriptOf(req));
    await bus.publish(EXTRACT_JOBS_TOPIC, [{ key: 'aaaaaaaaaaa', value: job(clock) }]);
    await expect.poll(() => results.length).toBe(1);
    expect(calls[0]!.mode).toBe(0);
    expect(extractJobV1.ExtractResult.decode(results[0]!.value).source).toBe('captions');
  });

  it('turns extraction errors into failure results with the public code, message and reason', async () => {
    const { results } = await start(async (req) => {
      if (req.videoId === 'privateaaaa') throw Errors.videoUnavailable(req.videoId, 'private');
      throw new Error('socket hang up at 10.0.0.7');
    });
    await bus.publish(EXTRACT_JOBS_TOPIC, [
      { key: 'privateaaaa', value: job(clock, { videoId: 'privateaaaa', itemIndex: 0 }) },
      { key: 'brokenaaaaa', value: job(clock, { videoId: 'brokenaaaaa', itemIndex: 1 }) },
    ]);
    await expect.poll(() => results.length).toBe(2);
    const byIndex = results
      .map((m) => extractJobV1.ExtractResult.decode(m.value))
      .sort((a, b) => a.itemIndex - b.itemIndex);
    expect(byIndex[0]).toMatchObject({
      success: false,
      errorCode: 'VIDEO_UNAVAILABLE',
      errorReason: 'private',
    });
    expect(byIndex[1]).toMatchObject({
      success: false,
      errorCode: 'INTERNAL_ERROR',
      errorMessage: 'An internal error occurred.',
    });
  });

  it('skips jobs whose deadline has passed (nobody is waiting)', async () => {
    const { calls, results } = await start(async (req) => transcriptOf(req));
    await bus.publish(EXTRACT_JOBS_TOPIC, [
      {
        key: 'expiredaaaa',
        value: job(clock, { videoId: 'expiredaaaa', deadline: new Date(clock.now() - 1).toISOString() }),
      },
      { key: 'expiredaaaa', value: job(clock, { videoId: 'expiredaaaa', itemIndex: 4 }) },
    ]);
    // Same key, same partition: once the live job is answered the expired one was handled.
    await expect.poll(() => results.length).toBe(1);
    expect(calls).toHaveLength(1);
    expect(extractJobV1.ExtractResult.decode(results[0]!.value).itemIndex).toBe(4);
  });

  it('answers TIMEOUT when the video outlives its item budget, and frees the partition', async () => {
    const { results } = await start((req) =>
      req.videoId === 'hangingaaaa' ? new Promise(() => {}) : Promise.resolve(transcriptOf(req)),
    );
    const started = performance.now();
    await bus.publish(EXTRACT_JOBS_TOPIC, [
      { key: 'hangingaaaa', value: job(clock, { videoId: 'hangingaaaa', itemIndex: 0, itemTimeoutMs: 150 }) },
      { key: 'hangingaaaa', value: job(clock, { videoId: 'hangingaaaa', itemIndex: 1, itemTimeoutMs: 150 }) },
    ]);
    await expect.poll(() => results.length).toBe(2);
    expect(performance.now() - started).toBeLessThan(5_000);
    for (const m of results) {
      expect(extractJobV1.ExtractResult.decode(m.value)).toMatchObject({
        success: false,
        errorCode: 'TIMEOUT',
      });
    }
  });

  it('dead-letters poison jobs at once and keeps serving the partition', async () => {
    const { results } = await start(async (req) => transcriptOf(req));
    const dead: DeliveredMessage[] = [];
    subs.push(await collect(bus, dlqTopic(EXTRACT_JOBS_TOPIC), dead));
    await bus.publish(EXTRACT_JOBS_TOPIC, [
      { key: 'aaaaaaaaaaa', value: Uint8Array.from([0x0a, 0xff, 0xff, 0xff]) },
      { key: 'aaaaaaaaaaa', value: job(clock, { replyTo: '' }) },
      { key: 'aaaaaaaaaaa', value: job(clock) },
    ]);
    await expect.poll(() => dead.length).toBe(2);
    await expect.poll(() => results.length).toBe(1);
    expect(dead.map((m) => m.headers['x-original-topic'])).toEqual([EXTRACT_JOBS_TOPIC, EXTRACT_JOBS_TOPIC]);
    expect(dead[1]!.headers['x-error-message']).toContain('reply_to');
  });

  it('answers only on the reply topics it is configured for, never another topic a job names', async () => {
    const extra = 'extract.results.gw-b.v1';
    subs.push(
      await startExtractWorker({
        bus,
        clock,
        logger: silentLogger,
        replyTopics: [extra],
        extraction: extractionWith(async (req) => transcriptOf(req)),
      }),
    );
    const [results, onExtra, stolen, dead] = [[], [], [], []] as DeliveredMessage[][];
    subs.push(await collect(bus, EXTRACT_RESULTS_TOPIC, results!));
    subs.push(await collect(bus, extra, onExtra!));
    subs.push(await collect(bus, 'billing.credit-usage.v1', stolen!));
    subs.push(await collect(bus, dlqTopic(EXTRACT_JOBS_TOPIC), dead!));
    await bus.publish(EXTRACT_JOBS_TOPIC, [
      { key: 'aaaaaaaaaaa', value: job(clock, { replyTopic: 'billing.credit-usage.v1' }) },
      { key: 'aaaaaaaaaaa', value: job(clock, { replyTopic: extra }) },
      { key: 'aaaaaaaaaaa', value: job(clock, { replyTopic: '' }) },
    ]);
    await expect.poll(() => results!.length + onExtra!.length).toBe(2);
    await expect.poll(() => dead!.length).toBe(1);
    expect(onExtra).toHaveLength(1);
    expect(results).toHaveLength(1);
    expect(stolen).toHaveLength(0);
    expect(dead![0]!.headers['x-error-message']).toContain('reply_topic');
  });

  it('runs several jobs of one partition at once, up to its concurrency per member', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let running = 0;
    let mostAtOnce = 0;
    const calls: string[] = [];
    subs.push(
      await startExtractWorker({
        bus,
        clock,
        logger: silentLogger,
        members: 1,
        concurrency: 3,
        extraction: extractionWith(async (req) => {
          calls.push(req.videoId);
          mostAtOnce = Math.max(mostAtOnce, ++running);
          await gate;
          running--;
          return transcriptOf(req);
        }),
      }),
    );
    const results: DeliveredMessage[] = [];
    subs.push(await collect(bus, EXTRACT_RESULTS_TOPIC, results));
    // One key: one partition. Four jobs; three run at once, the fourth waits for a free slot.
    await bus.publish(
      EXTRACT_JOBS_TOPIC,
      [0, 1, 2, 3].map((i) => ({ key: 'aaaaaaaaaaa', value: job(clock, { itemIndex: i }) })),
    );
    await expect.poll(() => calls.length).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(calls).toHaveLength(3);
    release();
    await expect.poll(() => results.length).toBe(4);
    expect(mostAtOnce).toBe(3);
    const indexes = results.map((m) => extractJobV1.ExtractResult.decode(m.value).itemIndex);
    expect(indexes.sort()).toEqual([0, 1, 2, 3]);
  });

  it('retries publishing a result until the bus takes it (redelivery of the job)', async () => {
    let failures = 2;
    const flaky: EventBus = {
      publish: (topic, messages) =>
        topic === EXTRACT_RESULTS_TOPIC && failures-- > 0
          ? Promise.reject(new Error('broker unreachable'))
          : bus.publish(topic, messages),
      subscribe: (o) => bus.subscribe(o),
      ensureTopics: (t) => bus.ensureTopics(t),
      isHealthy: () => bus.isHealthy(),
      hasActiveMembers: (g) => bus.hasActiveMembers(g),
      close: () => bus.close(),
    };
    let calls = 0;
    subs.push(
      await startExtractWorker({
        bus: flaky,
        clock,
        logger: silentLogger,
        extraction: extractionWith(async (req) => {
          calls++;
          return transcriptOf(req);
        }),
      }),
    );
    const results: DeliveredMessage[] = [];
    subs.push(await collect(bus, EXTRACT_RESULTS_TOPIC, results));
    await bus.publish(EXTRACT_JOBS_TOPIC, [{ key: 'aaaaaaaaaaa', value: job(clock) }]);
    await expect.poll(() => results.length).toBe(1);
    expect(calls).toBe(3);
    expect(await bus.isHealthy()).toBe(true);
  });

  it('bulk workers (own topic, group and concurrency) answer on the results topic; a full bulk backlog never delays a batch job', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const batchCalls: string[] = [];
    const bulkCalls: string[] = [];
    subs.push(
      await startExtractWorker({
        bus,
        clock,
        logger: silentLogger,
        extraction: extractionWith(async (req) => {
          batchCalls.push(req.videoId);
          return transcriptOf(req);
        }),
      }),
    );
    subs.push(
      await startExtractWorker({
        bus,
        clock,
        logger: silentLogger,
        topic: EXTRACT_BULK_JOBS_TOPIC,
        groupId: EXTRACT_BULK_WORKERS_GROUP,
        members: 1,
        concurrency: 2,
        extraction: extractionWith(async (req) => {
          bulkCalls.push(req.videoId);
          await gate;
          return transcriptOf(req);
        }),
      }),
    );
    const results: DeliveredMessage[] = [];
    subs.push(await collect(bus, EXTRACT_RESULTS_TOPIC, results));

    // One account's big job: more videos than the bulk workers run at once, all stuck upstream.
    const bulkIds = ['bulk0aaaaaa', 'bulk1aaaaaa', 'bulk2aaaaaa', 'bulk3aaaaaa', 'bulk4aaaaaa'];
    await bus.publish(
      EXTRACT_BULK_JOBS_TOPIC,
      bulkIds.map((videoId, i) => ({
        key: videoId,
        value: job(clock, { correlationId: 'job-1', replyTo: 'gw-bulk', videoId, itemIndex: i }),
      })),
    );
    await expect.poll(() => bulkCalls.length).toBe(2);

    // Another account's batch request is answered at once, by the batch workers only.
    await bus.publish(EXTRACT_JOBS_TOPIC, [
      { key: 'batchaaaaaa', value: job(clock, { videoId: 'batchaaaaaa' }) },
    ]);
    await expect.poll(() => results.length).toBe(1);
    expect(extractJobV1.ExtractResult.decode(results[0]!.value)).toMatchObject({
      correlationId: 'corr-1',
      videoId: 'batchaaaaaa',
      success: true,
    });
    expect(batchCalls).toEqual(['batchaaaaaa']);
    expect(bulkCalls).toHaveLength(2);

    release();
    await expect.poll(() => results.length).toBe(1 + bulkIds.length);
    const bulk = results.slice(1).map((m) => ({ key: m.key, ...extractJobV1.ExtractResult.decode(m.value) }));
    expect(bulk.map((r) => r.videoId).sort()).toEqual(bulkIds);
    for (const r of bulk) expect(r).toMatchObject({ key: 'gw-bulk', correlationId: 'job-1', success: true });
    // Neither worker took the other's jobs.
    expect(batchCalls).toEqual(['batchaaaaaa']);
    expect([...bulkCalls].sort()).toEqual(bulkIds);
    expect(await bus.hasActiveMembers(EXTRACT_BULK_WORKERS_GROUP)).toBe(true);
  });
});
