import { randomUUID } from 'node:crypto';
import { CLOUD_EVENT_KINDS, CONSUMER_GROUPS, TOPICS, cloudEventHeaders, extractJobV1 } from '@subx/contracts';
import { AppError, Errors, PROCESSING_RETRY_AFTER_SECONDS, isErrorCode } from '@subx/errors';
import type { extractorV1 } from '@subx/contracts';
import type { BusMessage, Clock, DeliveredMessage, EventBus, Logger, Subscription } from '@subx/ports';
import { countFanOutDeadlineMissed } from '@subx/service-kit';
import {
  SpanKind,
  contextFromTraceParent,
  currentTraceParent,
  injectTraceContext,
  withSpan,
  withTimeout,
} from '@subx/service-kit';
import type { FanOut, FanOutOutcome, FanOutRequest } from './types.ts';

/** Topic names (@subx/contracts TOPICS); the extractor's worker uses the same (docs/events.md). */
export const EXTRACT_JOBS_TOPIC = TOPICS.extractJobs.default;
export const EXTRACT_RESULTS_TOPIC = TOPICS.extractResults.default;

/** The slice of a pino logger the fan-out uses. */

export interface KafkaFanOutDeps {
  bus: EventBus;
  /** Unique per gateway process (e.g. pod name + random suffix): results come back addressed to it. */
  instanceId: string;
  /** Timestamps and the jobs' RFC 3339 deadlines; the waiting itself uses real timers. */
  clock: Clock;
  logger: Logger;
  jobsTopic?: string;
  resultsTopic?: string;
  /** Default `gateway-results-<instanceId>`: every instance reads every result and keeps its own. */
  groupId?: string;
  /** The extractor workers' consumer group (their KAFKA_GROUP_ID). Default 'extractor-workers'. */
  workersGroupId?: string;
  /**
   * A second opinion on whether workers are alive: a crashed worker stays a member of its group
   * until its session times out, but the process it ran in (the extractor) stops answering at
   * once. The gateway passes the extractor's gRPC health check.
   */
  workersReachable?: () => Promise<boolean>;
  /**
   * Bound on every bus step of a request (joining the results group, asking whether workers are
   * active, publishing the jobs). Default 5 000 ms: far inside the batch deadline.
   */
  busTimeoutMs?: number;
  /**
   * Runs a request when the bus cannot take it (not reachable within `busTimeoutMs`) or when no
   * extraction worker is active: the direct gRPC fan-out. Absent: such requests fail at once, every
   * item a retryable SERVICE_UNAVAILABLE.
   */
  fallback?: FanOut;
}

/** The bus or its workers cannot take the jobs: retryable, like any unreachable dependency. */
function jobQueueUnavailable(detail: string): AppError {
  return new AppError(
    'SERVICE_UNAVAILABLE',
    `The extraction queue is not available right now (${detail}); retry shortly.`,
  );
}

/** How long the answer "are workers active?" is reused: one broker question per second at most. */
const WORKERS_CHECK_TTL_MS = 1_000;

/** What happened to the results this instance has read (tests, metrics, the debug log). */
export interface KafkaFanOutStats {
  published: number;
  /** Results that completed an item of a waiting request. */
  accepted: number;
  /** Addressed to another gateway instance. */
  foreign: number;
  /** Second result for an item that already has one (worker redelivery). */
  duplicates: number;
  /** For a request that is no longer waiting (deadline passed, or unknown correlation id). */
  late: number;
  /** Undecodable, or not matching the job it claims to answer. */
  malformed: number;
}

export interface KafkaFanOut extends FanOut {
  /**
   * Ensures the topics and joins the results group; resolves once its partitions are assigned and
   * its start offsets are fixed, so no result published afterwards can be missed. `run` calls it
   * itself (once); call it at startup to fail fast and to keep the first request fast.
   */
  start(): Promise<void>;
  /** Stops reading results. Requests still waiting end at their deadlines (as TIMEOUT). */
  stop(): Promise<void>;
  stats(): KafkaFanOutStats;
  /** Requests currently waiting for results. */
  pendingCount(): number;
}

interface Pending {
  correlationId: string;
  requestId: string;
  videoIds: readonly string[];
  outcomes: (FanOutOutcome | undefined)[];
  remaining: number;
  finish(): void;
}

const SUBTITLE_TYPES = new Set<number>([0, 1, 2, 3]);

/**
 * FanOut over the event bus: one `ExtractJob` per video on `extract.jobs.v1` (key: video id), with
 * a correlation id and this instance as `reply_to`; extractor workers answer on
 * `extract.results.v1`. The request waits until every item has a result or the total deadline
 * passes; whatever is missing then is TIMEOUT. Each item's own budget travels in the job
 * (`item_timeout_ms`) and is enforced by the worker from when it starts the video.
 * Results for other instances, duplicates and late results are ignored, never errors.
 */
export function createKafkaFanOut(deps: KafkaFanOutDeps): KafkaFanOut {
  const { bus, instanceId, clock, logger } = deps;
  if (!instanceId) throw new Error('createKafkaFanOut: instanceId is required');
  const jobsTopic = deps.jobsTopic ?? EXTRACT_JOBS_TOPIC;
  const resultsTopic = deps.resultsTopic ?? EXTRACT_RESULTS_TOPIC;
  const groupId = deps.groupId ?? `gateway-results-${instanceId}`;
  const workersGroupId = deps.workersGroupId ?? CONSUMER_GROUPS.extractWorkers.default;
  const busTimeoutMs = deps.busTimeoutMs ?? 5_000;
  let workersCheck: { at: number; active: Promise<boolean> } | null = null;

  /** Whether some extraction worker holds the jobs topic now (cached briefly, bounded). */
  function workersActive(): Promise<boolean> {
    const now = performance.now();
    if (!workersCheck || now - workersCheck.at > WORKERS_CHECK_TTL_MS) {
      const reachable = deps.workersReachable ?? (() => Promise.resolve(true));
      workersCheck = {
        at: now,
        active: withTimeout(
          async () => (await Promise.all([bus.hasActiveMembers(workersGroupId), reachable()])).every(Boolean),
          busTimeoutMs,
          () => false,
        ).catch(() => false),
      };
    }
    return workersCheck.active;
  }

  /** The request without the bus: the fallback with what is left of its budget, or fail fast. */
  function withoutBus(request: FanOutRequest, startedAt: number, detail: string): Promise<FanOutOutcome[]> {
    logger.warn(
      {
        request_id: request.requestId,
        items: request.jobs.length,
        reason: detail,
        fallback: !!deps.fallback,
      },
      deps.fallback
        ? 'extraction queue unavailable: running the items over gRPC'
        : 'extraction queue unavailable',
    );
    if (!deps.fallback) {
      return Promise.resolve(request.jobs.map(() => ({ ok: false, error: jobQueueUnavailable(detail) })));
    }
    const left = Math.max(0, Math.floor(request.totalTimeoutMs - (performance.now() - startedAt)));
    return deps.fallback.run({ ...request, totalTimeoutMs: left });
  }

  const pending = new Map<string, Pending>();
  const stats: KafkaFanOutStats = {
    published: 0,
    accepted: 0,
    foreign: 0,
    duplicates: 0,
    late: 0,
    malformed: 0,
  };
  let subscription: Subscription | null = null;
  let starting: Promise<void> | null = null;
  let stopped = false;

  function onResult(message: DeliveredMessage): Promise<void> {
    let result: extractJobV1.ExtractResult;
    try {
      result = extractJobV1.ExtractResult.decode(message.value);
    } catch (error) {
      // A reply nobody can read cannot be replayed usefully: count it and move on (the job it
      // answers ends as TIMEOUT). Dead-lettering here would copy it once per gateway group.
      stats.malformed++;
      logger.warn({ err: String(error), offset: message.offset }, 'undecodable extract result dropped');
      return Promise.resolve();
    }
    if (result.replyTo !== instanceId) {
      stats.foreign++;
      return Promise.resolve();
    }
    const waiting = pending.get(result.correlationId);
    if (!waiting) {
      stats.late++;
      logger.debug(
        { correlation_id: result.correlationId, item_index: result.itemIndex },
        'late extract result dropped',
      );
      return Promise.resolve();
    }
    const index = result.itemIndex;
    if (
      !Number.isInteger(index) ||
      index < 0 ||
      index >= waiting.outcomes.length ||
      waiting.videoIds[index] !== result.videoId
    ) {
      stats.malformed++;
      logger.warn(
        { correlation_id: result.correlationId, item_index: index, video_id: result.videoId },
        'extract result does not match its job; dropped',
      );
      return Promise.resolve();
    }
    if (waiting.outcomes[index] !== undefined) {
      stats.duplicates++;
      return Promise.resolve();
    }
    stats.accepted++;
    waiting.outcomes[index] = toOutcome(result);
    waiting.remaining--;
    if (waiting.remaining === 0) waiting.finish();
    // A short consumer span under the worker's (from the result's headers) closes the trace.
    return withSpan(
      `${resultsTopic} process`,
      () => undefined,
      {
        'messaging.system': 'kafka',
        'messaging.destination.name': resultsTopic,
        'subx.correlation_id': result.correlationId,
        'subx.item_index': index,
        'subx.success': result.success,
      },
      { kind: SpanKind.CONSUMER, parent: contextFromTraceParent(message.headers.traceparent) },
    );
  }

  async function subscribe(): Promise<void> {
    await bus.ensureTopics([jobsTopic, resultsTopic]);
    // `subscribe` resolves after the group join, with the start offsets pinned to the partitions'
    // ends at that moment: every result published after this line is delivered to us.
    subscription = await bus.subscribe({
      groupId,
      topics: [resultsTopic],
      handler: (message) => onResult(message),
    });
    logger.info({ group_id: groupId, topic: resultsTopic }, 'listening for extract results');
  }

  function start(): Promise<void> {
    if (stopped) return Promise.reject(new Error('the Kafka fan-out is stopped'));
    starting ??= subscribe().catch((error: unknown) => {
      starting = null; // the next request tries again
      throw error;
    });
    return starting;
  }

  async function run(request: FanOutRequest): Promise<FanOutOutcome[]> {
    const n = request.jobs.length;
    if (n === 0) return [];
    const startedAt = performance.now();
    const TIMED_OUT = Symbol('timed out');
    const joined = await withTimeout(
      () => start().then(() => null),
      busTimeoutMs,
      () => TIMED_OUT,
    ).catch((error: unknown) => error);
    if (joined !== null) {
      const detail = joined === TIMED_OUT ? `no answer within ${busTimeoutMs} ms` : String(joined);
      return withoutBus(request, startedAt, `results: ${detail}`);
    }
    if (!(await workersActive())) return withoutBus(request, startedAt, 'no active extraction worker');

    const correlationId = randomUUID();
    const totalMs = Math.max(0, Math.floor(request.totalTimeoutMs - (performance.now() - startedAt)));
    const deadline = new Date(clock.now() + totalMs).toISOString();
    const outcomes: (FanOutOutcome | undefined)[] = new Array<FanOutOutcome | undefined>(n).fill(undefined);
    let timer: NodeJS.Timeout | undefined;
    const done = new Promise<void>((resolve) => {
      const waiting: Pending = {
        correlationId,
        requestId: request.requestId,
        videoIds: request.jobs.map((j) => j.videoId),
        outcomes,
        remaining: n,
        finish: resolve,
      };
      pending.set(correlationId, waiting);
      timer = setTimeout(resolve, totalMs);
    });

    try {
      await withSpan(
        `${jobsTopic} publish`,
        async () => {
          // The producer span's context: the worker's span becomes its child, the result carries
          // the worker's, so one trace runs gateway → Kafka → worker → result.
          const headers = injectTraceContext({});
          const traceParent = currentTraceParent() ?? '';
          const occurredAt = new Date(clock.now()).toISOString();
          const messages: BusMessage[] = request.jobs.map((job, itemIndex) => {
            const eventId = randomUUID();
            const cloudEvent = cloudEventHeaders(CLOUD_EVENT_KINDS.extractJobs, {
              id: eventId,
              time: occurredAt,
              subject: `${correlationId}/${itemIndex}`,
            });
            return {
              key: job.videoId,
              headers: { ...headers, ...cloudEvent, 'x-correlation-id': correlationId },
              value: extractJobV1.ExtractJob.encode({
                envelope: {
                  eventId,
                  occurredAt,
                  accountId: request.accountId ?? '',
                  idempotencyKey: request.idempotencyKey ?? '',
                  traceParent,
                },
                correlationId,
                itemIndex,
                videoId: job.videoId,
                language: job.language,
                include: job.include,
                replyTopic: resultsTopic,
                replyTo: instanceId,
                deadline,
                translate: job.translate,
                mode: job.mode ?? 0,
                maxAudioSeconds: job.maxAudioSeconds ?? 0,
                requestId: request.requestId,
                itemTimeoutMs: Math.max(0, Math.min(request.itemTimeoutMs, 2 ** 31 - 1)),
              }).finish(),
            };
          });
          const published = await withTimeout(
            () => bus.publish(jobsTopic, messages).then(() => true),
            busTimeoutMs,
            () => false,
          );
          if (!published) throw new Error(`publish: no answer within ${busTimeoutMs} ms`);
          stats.published += messages.length;
        },
        {
          'messaging.system': 'kafka',
          'messaging.destination.name': jobsTopic,
          'messaging.batch.message_count': n,
          'subx.correlation_id': correlationId,
        },
        { kind: SpanKind.PRODUCER },
      );
    } catch (error) {
      clearTimeout(timer);
      pending.delete(correlationId);
      // A publish that timed out may still land later: its results then arrive for nobody (late).
      return withoutBus(request, startedAt, `jobs: ${String(error)}`);
    }

    await done;
    clearTimeout(timer);
    pending.delete(correlationId);
    const result = outcomes.map((o): FanOutOutcome => o ?? { ok: false, error: Errors.timeout() });
    const timedOut = outcomes.filter((o) => o === undefined).length;
    if (timedOut > 0) {
      countFanOutDeadlineMissed('bus', timedOut);
      logger.info(
        { request_id: request.requestId, correlation_id: correlationId, timed_out: timedOut, items: n },
        'fan-out deadline reached',
      );
    }
    return result;
  }

  return {
    run,
    start,
    async stop() {
      stopped = true;
      await starting?.catch(() => undefined);
      await subscription?.stop();
      subscription = null;
    },
    stats: () => ({ ...stats }),
    pendingCount: () => pending.size,
  };
}

/** The worker's answer as the route's outcome; unknown error codes become INTERNAL_ERROR. */
function toOutcome(result: extractJobV1.ExtractResult): FanOutOutcome {
  if (!result.success) {
    const code = isErrorCode(result.errorCode) ? result.errorCode : 'INTERNAL_ERROR';
    const reason = result.errorReason || undefined;
    // The result event carries the reason; a stream's Retry-After follows from it (the same table
    // the extractor answers with), so a job knows when to ask again.
    const retryAfterSeconds =
      code === 'VIDEO_PROCESSING' && reason && Object.hasOwn(PROCESSING_RETRY_AFTER_SECONDS, reason)
        ? PROCESSING_RETRY_AFTER_SECONDS[reason as keyof typeof PROCESSING_RETRY_AFTER_SECONDS]
        : undefined;
    return {
      ok: false,
      error: new AppError(code, result.errorMessage || 'The extraction failed.', {
        ...(reason ? { reason } : {}),
        ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
      }),
    };
  }
  const transcript: extractorV1.GetTranscriptResponse = {
    videoId: result.videoId,
    language: result.language,
    subtitleType: SUBTITLE_TYPES.has(result.subtitleType) ? result.subtitleType : 0,
    segments: result.segments,
    metadata: result.metadata,
    cached: result.cached,
    fetchedAt: result.fetchedAt,
    segmentsJson: '',
    segmentsJsonUtf8: Buffer.alloc(0),
    headJsonUtf8: Buffer.alloc(0),
    source: result.source || 'captions',
    audioSeconds: result.audioSeconds,
    fallbackReason: result.fallbackReason,
    upstreamReason: result.upstreamReason,
    ...(result.translatedFrom === undefined ? {} : { translatedFrom: result.translatedFrom }),
    ...(result.translatedBy === undefined ? {} : { translatedBy: result.translatedBy }),
    ...(result.languageConfidence === undefined ? {} : { languageConfidence: result.languageConfidence }),
  };
  return { ok: true, transcript };
}
