import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commonV1, extractJobV1 } from '@subx/contracts';
import { AppError } from '@subx/errors';
import { ManualClock, createInProcessEventBus, silentLogger } from '@subx/ports';
import type { BusMessage, DeliveredMessage, EventBus, InProcessEventBus, Subscription } from '@subx/ports';
import { EXTRACT_JOBS_TOPIC, EXTRACT_RESULTS_TOPIC, createKafkaFanOut } from './kafka-fan-out.ts';
import type { KafkaFanOut } from './kafka-fan-out.ts';
import type { FanOutJob, FanOutRequest } from './types.ts';

const WORKERS = 'fake-workers';

type Behaviour =
  | { kind: 'ok' }
  | { kind: 'fail'; code: string; message: string; reason?: string }
  | { kind: 'silent' }
  | { kind: 'twice' };

/**
 * A stand-in extractor worker on the bus: answers each job as `behaviour(videoId)` says and keeps
 * the jobs it saw, so tests can forge foreign, duplicate and late results for real correlation ids.
 */
async function startFakeWorker(
  bus: EventBus,
  behaviour: (videoId: string) => Behaviour,
): Promise<{ jobs: { job: extractJobV1.ExtractJob; message: DeliveredMessage }[]; stop(): Promise<void> }> {
  const jobs: { job: extractJobV1.ExtractJob; message: DeliveredMessage }[] = [];
  const sub: Subscription = await bus.subscribe({
    groupId: WORKERS,
    topics: [EXTRACT_JOBS_TOPIC],
    handler: async (message) => {
      const job = extractJobV1.ExtractJob.decode(message.value);
      jobs.push({ job, message });
      const b = behaviour(job.videoId);
      if (b.kind === 'silent') return;
      const reply = b.kind === 'fail' ? failure(job, b.code, b.message, b.reason) : success(job);
      const out: BusMessage = { key: job.replyTo, value: encode(reply) };
      await bus.publish(job.replyTopic, b.kind === 'twice' ? [out, out] : [out]);
    },
  });
  return { jobs, stop: () => sub.stop() };
}

function success(job: extractJobV1.ExtractJob, overrides: Partial<extractJobV1.ExtractResult> = {}) {
  return extractJobV1.ExtractResult.fromPartial({
    correlationId: job.correlationId,
    itemIndex: job.itemIndex,
    videoId: job.videoId,
    replyTo: job.replyTo,
    success: true,
    language: job.language,
    subtitleType: commonV1.SubtitleType.SUBTITLE_TYPE_MANUAL,
    segments: [{ text: `text of ${job.videoId}`, start: 0, duration: 1.5 }],
    metadata: { title: `title ${job.videoId}`, channel: 'c', channelId: 'UC', duration: 10 },
    cached: false,
    fetchedAt: '2026-01-01T00:00:00.000Z',
    ...overrides,
  });
}

function failure(job: extractJobV1.ExtractJob, code: string, message: string, reason?: string) {
  return extractJobV1.ExtractResult.fromPartial({
    correlationId: job.correlationId,
    itemIndex: job.itemIndex,
    videoId: job.videoId,
    replyTo: job.replyTo,
    success: false,
    errorCode: code,
    errorMessage: message,
    errorReason: reason ?? '',
  });
}

const encode = (r: extractJobV1.ExtractResult): Uint8Array => extractJobV1.ExtractResult.encode(r).finish();

const videos = (...ids: string[]): FanOutJob[] =>
  ids.map((videoId) => ({ videoId, language: 'en', include: ['tags'], translate: false }));

const request = (jobs: FanOutJob[], overrides: Partial<FanOutRequest> = {}): FanOutRequest => ({
  requestId: 'req-1',
  jobs,
  totalTimeoutMs: 5_000,
  itemTimeoutMs: 5_000,
  ...overrides,
});

describe('Kafka fan-out (in-process bus)', () => {
  let bus: InProcessEventBus;
  let clock: ManualClock;
  let fanOut: KafkaFanOut;

  beforeEach(() => {
    bus = createInProcessEventBus({ retryBackoff: { initialMs: 5, maxMs: 20 } });
    clock = new ManualClock(Date.UTC(2026, 2, 1, 12));
    fanOut = createKafkaFanOut({
      bus,
      instanceId: 'gw-a',
      clock,
      logger: silentLogger,
      workersGroupId: WORKERS,
    });
  });
  afterEach(async () => {
    await fanOut.stop();
    await bus.close();
  });

  it('gives a stream in processing the Retry-After of its reason, which the result event does not carry', async () => {
    await startFakeWorker(bus, (id) =>
      id === 'live0000000'
        ? { kind: 'fail', code: 'VIDEO_PROCESSING', message: 'live now', reason: 'live' }
        : { kind: 'fail', code: 'VIDEO_PROCESSING', message: 'processing', reason: 'post_live' },
    );
    const outcomes = await fanOut.run(
      request(videos('live0000000', 'postlive000'), { totalTimeoutMs: 4_000, itemTimeoutMs: 1_500 }),
    );
    expect(outcomes.map((o) => (o.ok ? null : [o.error.code, o.error.retryAfterSeconds]))).toEqual([
      ['VIDEO_PROCESSING', 900],
      ['VIDEO_PROCESSING', 300],
    ]);
  });

  it('publishes one job per video keyed by video id and answers one outcome per job, in job order', async () => {
    const worker = await startFakeWorker(bus, (id) =>
      id === 'bad00000000'
        ? { kind: 'fail', code: 'VIDEO_UNAVAILABLE', message: 'private', reason: 'private' }
        : { kind: 'ok' },
    );
    const ids = ['aaaaaaaaaaa', 'bad00000000', 'ccccccccccc', 'aaaaaaaaaaa'];
    const outcomes = await fanOut.run(
      request(videos(...ids), {
        accountId: 'acc-1',
        idempotencyKey: 'idem-1',
        totalTimeoutMs: 4_000,
        itemTimeoutMs: 1_500,
      }),
    );

    expect(outcomes).toHaveLength(4);
    expect(outcomes.map((o) => (o.ok ? o.transcript.videoId : o.error.code))).toEqual([
      'aaaaaaaaaaa',
      'VIDEO_UNAVAILABLE',
      'ccccccccccc',
      'aaaaaaaaaaa',
    ]);
    const failed = outcomes[1]!;
    expect(!failed.ok && failed.error.reason).toBe('private');
    const first = outcomes[0]!;
    expect(first.ok && first.transcript.segments[0]?.text).toBe('text of aaaaaaaaaaa');
    expect(first.ok && first.transcript.metadata?.title).toBe('title aaaaaaaaaaa');

    expect(worker.jobs).toHaveLength(4);
    const correlation = worker.jobs[0]!.job.correlationId;
    for (const { job, message } of worker.jobs) {
      expect(message.key).toBe(job.videoId);
      expect(message.topic).toBe(EXTRACT_JOBS_TOPIC);
      expect(job.correlationId).toBe(correlation);
      expect(job.replyTo).toBe('gw-a');
      expect(job.replyTopic).toBe(EXTRACT_RESULTS_TOPIC);
      // The total budget minus the time spent joining the results group.
      expect(Date.parse(job.deadline)).toBeGreaterThan(clock.now() + 3_000);
      expect(Date.parse(job.deadline)).toBeLessThanOrEqual(clock.now() + 4_000);
      expect(job.itemTimeoutMs).toBe(1_500);
      expect(job.include).toEqual(['tags']);
      expect(job.requestId).toBe('req-1');
      expect(job.envelope?.accountId).toBe('acc-1');
      expect(job.envelope?.idempotencyKey).toBe('idem-1');
      expect(job.envelope?.eventId).toMatch(/^[0-9a-f-]{36}$/);
      expect(message.headers).toMatchObject({
        ce_specversion: '1.0',
        ce_id: job.envelope!.eventId,
        ce_time: job.envelope!.occurredAt,
        ce_source: '//subx/gateway',
        ce_type: 'com.subx.extract-job.v1',
        ce_subject: `${correlation}/${job.itemIndex}`,
        ce_dataschema: 'proto:subx.events.v1.ExtractJob',
        'content-type': 'application/protobuf',
      });
    }
    expect(worker.jobs.map((j) => j.job.itemIndex).sort()).toEqual([0, 1, 2, 3]);
    expect(fanOut.pendingCount()).toBe(0);
    await worker.stop();
  });

  it('carries mode in the job and brings source, audio seconds, translated_by and confidence back', async () => {
    const seen: extractJobV1.ExtractJob[] = [];
    const sub = await bus.subscribe({
      groupId: WORKERS,
      topics: [EXTRACT_JOBS_TOPIC],
      handler: async (message) => {
        const job = extractJobV1.ExtractJob.decode(message.value);
        seen.push(job);
        const reply =
          job.mode === 2
            ? success(job, {
                subtitleType: commonV1.SubtitleType.SUBTITLE_TYPE_TRANSCRIBED,
                source: 'audio',
                audioSeconds: 70,
              })
            : success(job, { translatedFrom: 'en', translatedBy: 'model', languageConfidence: 'low' });
        await bus.publish(job.replyTopic, [{ key: job.replyTo, value: encode(reply) }]);
      },
    });
    const outcomes = await fanOut.run(
      request([{ ...videos('aaaaaaaaaaa')[0]!, mode: 2 }, ...videos('bbbbbbbbbbb')]),
    );
    expect(seen.map((j) => j.mode).sort()).toEqual([0, 2]);
    const [audio, translated] = outcomes.map((o) => (o.ok ? o.transcript : undefined));
    expect(audio).toMatchObject({
      subtitleType: commonV1.SubtitleType.SUBTITLE_TYPE_TRANSCRIBED,
      source: 'audio',
      audioSeconds: 70,
    });
    expect(translated).toMatchObject({
      source: 'captions',
      translatedFrom: 'en',
      translatedBy: 'model',
      languageConfidence: 'low',
    });
    await sub.stop();
  });

  it('answers TIMEOUT for items without a result by the total deadline, and on time', async () => {
    const worker = await startFakeWorker(bus, (id) =>
      id === 'slow0000000' ? { kind: 'silent' } : { kind: 'ok' },
    );
    const started = performance.now();
    const outcomes = await fanOut.run(
      request(videos('fast0000000', 'slow0000000'), { totalTimeoutMs: 300, itemTimeoutMs: 300 }),
    );
    const elapsed = performance.now() - started;
    expect(outcomes[0]?.ok).toBe(true);
    expect(outcomes[1]).toMatchObject({ ok: false, error: { code: 'TIMEOUT' } });
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(2_000);
    expect(fanOut.pendingCount()).toBe(0);

    // The result that arrives after the deadline is dropped without error.
    const slow = worker.jobs.find((j) => j.job.videoId === 'slow0000000')!.job;
    await bus.publish(EXTRACT_RESULTS_TOPIC, [{ key: 'gw-a', value: encode(success(slow)) }]);
    await expect.poll(() => fanOut.stats().late).toBe(1);
    expect(fanOut.stats().accepted).toBe(1);
    await worker.stop();
  });

  it('ignores duplicate results of an item (the first one counts); after completion they are late', async () => {
    const worker = await startFakeWorker(bus, () => ({ kind: 'twice' }));
    const outcomes = await fanOut.run(request(videos('aaaaaaaaaaa', 'bbbbbbbbbbb')));
    expect(outcomes.every((o) => o.ok)).toBe(true);
    // Results share one partition (key = reply_to): the first pair's copy arrives while the
    // request still waits (duplicate), the last one's after it completed (late).
    await expect.poll(() => fanOut.stats().duplicates + fanOut.stats().late).toBe(2);
    expect(fanOut.stats().duplicates).toBeGreaterThanOrEqual(1);
    expect(fanOut.stats().accepted).toBe(2);
    await worker.stop();
  });

  it('a duplicate that disagrees with the first result does not replace it', async () => {
    const sub = await bus.subscribe({
      groupId: WORKERS,
      topics: [EXTRACT_JOBS_TOPIC],
      handler: async (message) => {
        const job = extractJobV1.ExtractJob.decode(message.value);
        if (job.itemIndex === 0) {
          await bus.publish(EXTRACT_RESULTS_TOPIC, [
            { key: 'gw-a', value: encode(failure(job, 'UPSTREAM_TIMEOUT', 'slow')) },
            { key: 'gw-a', value: encode(success(job)) },
          ]);
          return;
        }
        // Item 1 keeps the request open until item 0's second result has been seen.
        await expect.poll(() => fanOut.stats().duplicates).toBe(1);
        await bus.publish(EXTRACT_RESULTS_TOPIC, [{ key: 'gw-a', value: encode(success(job)) }]);
      },
    });
    const [first, second] = await fanOut.run(request(videos('aaaaaaaaaaa', 'bbbbbbbbbbb')));
    expect(first).toMatchObject({ ok: false, error: { code: 'UPSTREAM_TIMEOUT' } });
    expect(second?.ok).toBe(true);
    expect(fanOut.stats().duplicates).toBe(1);
    await sub.stop();
  });

  it('two instances on one bus: each request gets its own results; the other instance ignores them', async () => {
    const other = createKafkaFanOut({
      bus,
      instanceId: 'gw-b',
      clock,
      logger: silentLogger,
      workersGroupId: WORKERS,
    });
    const worker = await startFakeWorker(bus, () => ({ kind: 'ok' }));
    try {
      const [a, b] = await Promise.all([
        fanOut.run(request(videos('aaaaaaaaaaa', 'bbbbbbbbbbb'))),
        other.run(request(videos('ccccccccccc', 'ddddddddddd', 'eeeeeeeeeee'))),
      ]);
      expect(a.map((o) => o.ok && o.transcript.videoId)).toEqual(['aaaaaaaaaaa', 'bbbbbbbbbbb']);
      expect(b.map((o) => o.ok && o.transcript.videoId)).toEqual([
        'ccccccccccc',
        'ddddddddddd',
        'eeeeeeeeeee',
      ]);
      await expect.poll(() => fanOut.stats().foreign).toBe(3);
      await expect.poll(() => other.stats().foreign).toBe(2);
      expect(fanOut.stats().accepted).toBe(2);
      expect(other.stats().accepted).toBe(3);
    } finally {
      await other.stop();
      await worker.stop();
    }
  });

  it('drops results addressed to it that do not match their job, and undecodable ones', async () => {
    const sub = await bus.subscribe({
      groupId: WORKERS,
      topics: [EXTRACT_JOBS_TOPIC],
      handler: async (message) => {
        const job = extractJobV1.ExtractJob.decode(message.value);
        await bus.publish(EXTRACT_RESULTS_TOPIC, [
          { key: 'gw-a', value: Uint8Array.from([0xff, 0xff, 0xff]) },
          { key: 'gw-a', value: encode(success(job, { videoId: 'zzzzzzzzzzz' })) },
          { key: 'gw-a', value: encode(success(job, { itemIndex: 7 })) },
          { key: 'gw-a', value: encode(success(job)) },
        ]);
      },
    });
    const [outcome] = await fanOut.run(request(videos('aaaaaaaaaaa')));
    expect(outcome?.ok && outcome.transcript.videoId).toBe('aaaaaaaaaaa');
    expect(fanOut.stats().malformed).toBe(3);
    await sub.stop();
  });

  it('unknown error codes from a worker become INTERNAL_ERROR', async () => {
    const worker = await startFakeWorker(bus, () => ({ kind: 'fail', code: 'NOT_A_CODE', message: 'x' }));
    const [outcome] = await fanOut.run(request(videos('aaaaaaaaaaa')));
    expect(outcome).toMatchObject({ ok: false, error: { code: 'INTERNAL_ERROR' } });
    await worker.stop();
  });

  it('never rejects: a bus that refuses jobs makes every item a retryable SERVICE_UNAVAILABLE', async () => {
    const worker = await startFakeWorker(bus, () => ({ kind: 'ok' }));
    const broken: EventBus = { ...bus, publish: () => Promise.reject(new Error('broker unreachable')) };
    const f = createKafkaFanOut({
      bus: broken,
      instanceId: 'gw-c',
      clock,
      logger: silentLogger,
      workersGroupId: WORKERS,
    });
    const outcomes = await f.run(request(videos('aaaaaaaaaaa', 'bbbbbbbbbbb')));
    expect(outcomes.map((o) => !o.ok && o.error.code)).toEqual([
      'SERVICE_UNAVAILABLE',
      'SERVICE_UNAVAILABLE',
    ]);
    expect(outcomes.every((o) => !o.ok && o.error.retryable)).toBe(true);
    expect(f.pendingCount()).toBe(0);
    await f.stop();
    await worker.stop();
  });

  it('a bus that never answers is given up on within busTimeoutMs, far inside the deadline', async () => {
    const worker = await startFakeWorker(bus, () => ({ kind: 'ok' }));
    const hanging: EventBus = { ...bus, publish: () => new Promise<void>(() => undefined) };
    const f = createKafkaFanOut({
      bus: hanging,
      instanceId: 'gw-d',
      clock,
      logger: silentLogger,
      workersGroupId: WORKERS,
      busTimeoutMs: 200,
    });
    const t0 = performance.now();
    const outcomes = await f.run({ ...request(videos('aaaaaaaaaaa')), totalTimeoutMs: 30_000 });
    expect(performance.now() - t0).toBeLessThan(5_000);
    expect(outcomes).toMatchObject([{ ok: false, error: { code: 'SERVICE_UNAVAILABLE' } }]);
    await f.stop();
    await worker.stop();
  });

  it('no active worker: fails fast without a fallback, runs the items on the fallback with one', async () => {
    const t0 = performance.now();
    const lonely = createKafkaFanOut({
      bus,
      instanceId: 'gw-e',
      clock,
      logger: silentLogger,
      workersGroupId: WORKERS,
    });
    const outcomes = await lonely.run({ ...request(videos('aaaaaaaaaaa')), totalTimeoutMs: 30_000 });
    expect(performance.now() - t0).toBeLessThan(5_000);
    expect(outcomes).toMatchObject([{ ok: false, error: { code: 'SERVICE_UNAVAILABLE', retryable: true } }]);
    expect(lonely.stats().published).toBe(0);
    await lonely.stop();

    const direct: FanOutRequest[] = [];
    const withFallback = createKafkaFanOut({
      bus,
      instanceId: 'gw-f',
      clock,
      logger: silentLogger,
      workersGroupId: WORKERS,
      fallback: {
        run: async (r) => {
          direct.push(r);
          return r.jobs.map(() => ({ ok: false, error: new AppError('NO_SUBTITLES', 'none') }));
        },
      },
    });
    const viaFallback = await withFallback.run({ ...request(videos('bbbbbbbbbbb')), totalTimeoutMs: 30_000 });
    expect(viaFallback).toMatchObject([{ ok: false, error: { code: 'NO_SUBTITLES' } }]);
    expect(direct).toHaveLength(1);
    expect(direct[0]!.totalTimeoutMs).toBeLessThanOrEqual(30_000);
    expect(withFallback.stats().published).toBe(0);
    await withFallback.stop();
  });

  it('a worker still in its group but whose process does not answer counts as gone', async () => {
    const worker = await startFakeWorker(bus, () => ({ kind: 'ok' }));
    const f = createKafkaFanOut({
      bus,
      instanceId: 'gw-g',
      clock,
      logger: silentLogger,
      workersGroupId: WORKERS,
      workersReachable: async () => false,
    });
    const outcomes = await f.run({ ...request(videos('aaaaaaaaaaa')), totalTimeoutMs: 30_000 });
    expect(outcomes).toMatchObject([{ ok: false, error: { code: 'SERVICE_UNAVAILABLE' } }]);
    expect(f.stats().published).toBe(0);
    await f.stop();
    await worker.stop();
  });

  it('an empty request publishes nothing', async () => {
    expect(await fanOut.run(request([]))).toEqual([]);
    expect(fanOut.stats().published).toBe(0);
  });
});
