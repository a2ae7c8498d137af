import { randomUUID } from 'node:crypto';
import type { DeliveredMessage, EventBus, Logger, Subscription } from '@subx/ports';
import { RetryableError } from '@subx/ports';
import { CLOUD_EVENT_KINDS, CONSUMER_GROUPS, TOPICS, cloudEventHeaders, extractJobV1 } from '@subx/contracts';
import type { extractorV1 } from '@subx/contracts';
import { Errors, isAppError } from '@subx/errors';
import {
  SpanKind,
  contextFromTraceParent,
  injectTraceContext,
  withSpan,
  withTimeout,
} from '@subx/service-kit';
import type { ExtractionService } from '../extraction-service.ts';

export const EXTRACT_JOBS_TOPIC = TOPICS.extractJobs.default;
export const EXTRACT_RESULTS_TOPIC = TOPICS.extractResults.default;
export const EXTRACT_WORKERS_GROUP = CONSUMER_GROUPS.extractWorkers.default;
export const EXTRACT_BULK_JOBS_TOPIC = TOPICS.extractBulkJobs.default;
export const EXTRACT_BULK_WORKERS_GROUP = CONSUMER_GROUPS.extractBulkWorkers.default;

class PoisonJobError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PoisonJobError';
  }
}

export interface ExtractWorkerDeps {
  bus: EventBus;
  extraction: ExtractionService;
  logger: Logger;
  clock?: { now(): number };
  groupId?: string;
  topic?: string;
  /** Where results go when a job names no `reply_topic`. */
  resultsTopic?: string;
  /**
   * Other topics a job may name as its `reply_topic` (per-instance reply topics). The worker
   * publishes on `resultsTopic` and these only: a job naming any other topic is poison, so that
   * whoever can publish a job cannot make the extractor write into an arbitrary topic.
   */
  replyTopics?: readonly string[];
  /**
   * Group members this process runs (default 4); the group's partitions are split among all
   * members of all processes.
   */
  members?: number;
  /**
   * Jobs one member runs at once, several of one partition included (the bus's
   * `perPartitionConcurrency` and `maxInFlight`). Default `DEFAULT_EXTRACT_WORKER_CONCURRENCY`.
   * Jobs are keyed by video id, so with one job per partition at a time two videos of a batch that
   * hash to one partition ran one after the other; their order does not matter. 1: one job at a
   * time per member.
   */
  concurrency?: number;
}

/** Jobs in flight per member by default (measured: scripts/bench/batch-fanout.ts, docs/events.md). */
export const DEFAULT_EXTRACT_WORKER_CONCURRENCY = 16;

/**
 * Jobs in flight per member of the bulk workers (EXTRACT_BULK_WORKER_CONCURRENCY) by default: half
 * the batch workers', so that bulk jobs, which nobody waits on interactively, leave most of a
 * process's extraction capacity to batch and playlist requests.
 */
export const DEFAULT_EXTRACT_BULK_WORKER_CONCURRENCY = 8;

/** What `startExtractWorker` returns: all members stop (or, in tests, crash) together. */
export interface ExtractWorker extends Subscription {
  crash(): Promise<void>;
}

/**
 * Extraction worker: one job per video, published by a gateway for a batch or playlist request
 * (on `extract.jobs.v1`) or for a bulk job (on `extract.bulk-jobs.v1`: the same worker, started
 * once more with that topic, its own group and a lower concurrency).
 * It answers every live job with exactly one result on the job's reply topic (keyed by the asking
 * gateway), success or failure. Upstream failures are results, not retries: the gateway is
 * waiting under a deadline. The video's budget (`item_timeout_ms`, from when this worker starts
 * it, capped by the request `deadline`) bounds the wait: past it the answer is TIMEOUT and the
 * partition moves on (the fetch itself still completes into the cache). A job whose deadline has
 * passed is acknowledged without work, since nobody waits for it any more. Only publishing the
 * result is retried (redelivery); a redelivered job may produce a second result, which the
 * gateway ignores. An undecodable or incomplete job is poison: dead-lettered on its first failure,
 * and so is a job whose `reply_topic` is not one this worker is configured to answer on.
 */
export async function startExtractWorker(deps: ExtractWorkerDeps): Promise<ExtractWorker> {
  const clock = deps.clock ?? { now: () => Date.now() };
  const topic = deps.topic ?? EXTRACT_JOBS_TOPIC;
  const resultsTopic = deps.resultsTopic ?? EXTRACT_RESULTS_TOPIC;
  const replyTopics = new Set([resultsTopic, ...(deps.replyTopics ?? [])]);
  await deps.bus.ensureTopics([topic, resultsTopic]);

  /** The transcript, or an AppError; TIMEOUT when the budget runs out first. */
  async function extract(
    job: extractJobV1.ExtractJob,
    budgetMs: number,
  ): Promise<extractorV1.GetTranscriptResponse | Error> {
    // The budget's end stops model work nobody else waits for (the cache's single flight).
    const signal = Number.isFinite(budgetMs) ? AbortSignal.timeout(budgetMs) : undefined;
    const work = () =>
      deps.extraction
        .getTranscript(
          {
            videoId: job.videoId,
            language: job.language || 'en',
            include: job.include,
            forceRefresh: false,
            translate: job.translate,
            // The job's result carries the segments (ExtractResult.segments).
            segmentsAsJson: false,
            segmentsJsonAsBytes: false,
            headJsonAsBytes: false,
            answerJson: false,
            mode: job.mode,
            maxAudioSeconds: job.maxAudioSeconds,
            accountId: job.envelope?.accountId ?? '',
          },
          { signal },
        )
        .then(
          (t) => t,
          (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
        );
    if (!Number.isFinite(budgetMs)) return work();
    return withTimeout(work, budgetMs, () => Errors.timeout());
  }

  async function process(job: extractJobV1.ExtractJob, message: DeliveredMessage): Promise<void> {
    const now = clock.now();
    const deadline = job.deadline ? Date.parse(job.deadline) : Number.NaN;
    const untilDeadline = Number.isNaN(deadline) ? Infinity : deadline - now;
    if (untilDeadline <= 0) {
      deps.logger.info(
        { correlation_id: job.correlationId, video_id: job.videoId, attempt: message.attempt },
        'expired extract job skipped',
      );
      return;
    }
    const budgetMs = Math.min(untilDeadline, job.itemTimeoutMs > 0 ? job.itemTimeoutMs : Infinity);
    const outcome = await extract(job, budgetMs);
    if (clock.now() >= deadline) {
      // The request has answered without us (TIMEOUT); a result now would only be dropped.
      deps.logger.info(
        { correlation_id: job.correlationId, video_id: job.videoId },
        'extract job outlived its deadline',
      );
      return;
    }

    const base = {
      envelope: {
        eventId: randomUUID(),
        occurredAt: new Date(clock.now()).toISOString(),
        accountId: job.envelope?.accountId ?? '',
        idempotencyKey: job.envelope?.idempotencyKey ?? '',
        traceParent: '',
      },
      correlationId: job.correlationId,
      itemIndex: job.itemIndex,
      videoId: job.videoId,
      replyTo: job.replyTo,
    };
    let result: extractJobV1.ExtractResult;
    if (!(outcome instanceof Error)) {
      result = {
        ...base,
        success: true,
        language: outcome.language,
        subtitleType: outcome.subtitleType,
        segments: outcome.segments,
        metadata: outcome.metadata,
        errorCode: '',
        errorMessage: '',
        errorReason: '',
        cached: outcome.cached,
        fetchedAt: outcome.fetchedAt,
        ...(outcome.translatedFrom === undefined ? {} : { translatedFrom: outcome.translatedFrom }),
        ...(outcome.translatedBy === undefined ? {} : { translatedBy: outcome.translatedBy }),
        ...(outcome.languageConfidence === undefined
          ? {}
          : { languageConfidence: outcome.languageConfidence }),
        source: outcome.source,
        audioSeconds: outcome.audioSeconds,
        fallbackReason: outcome.fallbackReason,
        upstreamReason: outcome.upstreamReason,
      };
    } else {
      const app = isAppError(outcome) ? outcome : null;
      if (!app) {
        deps.logger.error(
          { err: outcome, video_id: job.videoId, correlation_id: job.correlationId },
          'extract job failed unexpectedly',
        );
      }
      result = {
        ...base,
        success: false,
        language: '',
        subtitleType: 0,
        segments: [],
        metadata: undefined,
        errorCode: app?.code ?? 'INTERNAL_ERROR',
        errorMessage: app?.isPublic ? app.message : 'An internal error occurred.',
        errorReason: app?.reason ?? '',
        cached: false,
        fetchedAt: '',
        source: '',
        audioSeconds: 0,
        fallbackReason: '',
        upstreamReason: '',
      };
    }

    // Our span's context when telemetry runs; otherwise pass on the one we were given.
    const headers = injectTraceContext({});
    headers.traceparent ??= message.headers.traceparent ?? job.envelope?.traceParent ?? '';
    if (!headers.traceparent) delete headers.traceparent;
    result.envelope!.traceParent = headers.traceparent ?? '';
    headers['x-correlation-id'] = job.correlationId;
    Object.assign(
      headers,
      cloudEventHeaders(CLOUD_EVENT_KINDS.extractResults, {
        id: result.envelope!.eventId,
        time: result.envelope!.occurredAt,
        subject: `${job.correlationId}/${job.itemIndex}`,
      }),
    );
    try {
      await deps.bus.publish(job.replyTopic || resultsTopic, [
        { key: job.replyTo, value: extractJobV1.ExtractResult.encode(result).finish(), headers },
      ]);
    } catch (err) {
      throw new RetryableError('publishing the extract result failed', { cause: err });
    }
  }

  async function handle(message: DeliveredMessage): Promise<void> {
    let job: extractJobV1.ExtractJob;
    try {
      job = extractJobV1.ExtractJob.decode(message.value);
    } catch (err) {
      throw new PoisonJobError(`undecodable extract job: ${(err as Error).message}`);
    }
    if (!job.correlationId || !job.replyTo || !job.videoId) {
      throw new PoisonJobError('extract job without correlation_id, reply_to or video_id');
    }
    if (job.replyTopic && !replyTopics.has(job.replyTopic)) {
      throw new PoisonJobError(
        `extract job names a reply_topic this worker does not answer on (${job.replyTopic.slice(0, 100)}); allowed: ${[...replyTopics].join(', ')} (EXTRACT_RESULTS_TOPIC, EXTRACT_REPLY_TOPICS)`,
      );
    }
    await withSpan(
      `${message.topic} process`,
      () => process(job, message),
      {
        'messaging.system': 'kafka',
        'messaging.destination.name': message.topic,
        'messaging.kafka.partition': message.partition,
        'subx.correlation_id': job.correlationId,
        'subx.item_index': job.itemIndex,
        'subx.video_id': job.videoId,
        'subx.attempt': message.attempt,
      },
      {
        kind: SpanKind.CONSUMER,
        parent: contextFromTraceParent(message.headers.traceparent ?? job.envelope?.traceParent),
      },
    );
  }

  const concurrency = deps.concurrency ?? DEFAULT_EXTRACT_WORKER_CONCURRENCY;
  const members: Subscription[] = [];
  try {
    for (let i = 0; i < Math.max(1, deps.members ?? 4); i++) {
      members.push(
        await deps.bus.subscribe({
          groupId: deps.groupId ?? EXTRACT_WORKERS_GROUP,
          topics: [topic],
          handler: handle,
          // Decoding is deterministic: a job that failed once fails always. Everything else is a
          // result or a RetryableError, so the only non-retryable failure is poison.
          maxAttempts: 1,
          perPartitionConcurrency: concurrency,
          maxInFlight: concurrency,
        }),
      );
    }
  } catch (error) {
    await Promise.allSettled(members.map((m) => m.stop()));
    throw error;
  }
  return {
    stop: async () => {
      await Promise.all(members.map((m) => m.stop()));
    },
    // Both adapters' subscriptions can crash (port.ts CrashableSubscription); a test hook.
    crash: async () => {
      await Promise.all(
        members.map((m) =>
          'crash' in m && typeof m.crash === 'function' ? (m as ExtractWorker).crash() : m.stop(),
        ),
      );
    },
  };
}
