import { randomUUID } from 'node:crypto';
import type { EventBus, Subscription, DeliveredMessage } from '@subx/ports';
import { RetriableError } from '@subx/ports';
import { extractJobV1 } from '@subx/contracts';
import { isAppError } from '@subx/errors';
import type { ExtractionService } from '../extraction-service.ts';

export const EXTRACT_JOBS_TOPIC = 'extract.jobs.v1';
export const EXTRACT_RESULTS_TOPIC = 'extract.results.v1';
export const EXTRACT_WORKERS_GROUP = 'extractor-workers';

interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export class PoisonJobError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PoisonJobError';
  }
}

/**
 * Extraction worker: one job per video, published by a gateway for a batch or playlist request.
 * It answers every job with exactly one result on the job's reply topic (keyed by the asking
 * gateway), success or failure. Upstream failures are results, not retries: the gateway is
 * waiting under a deadline. Only publishing the result is retried (redelivery), and a job whose
 * deadline has passed is acknowledged without work, since nobody waits for it any more.
 * A redelivered job may produce a second result; the gateway ignores duplicates.
 */
export async function startExtractWorker(deps: {
  bus: EventBus;
  extraction: ExtractionService;
  logger: Logger;
  clock?: { now(): number };
  groupId?: string;
  topic?: string;
}): Promise<Subscription> {
  const clock = deps.clock ?? { now: () => Date.now() };
  const topic = deps.topic ?? EXTRACT_JOBS_TOPIC;
  await deps.bus.ensureTopics([topic, EXTRACT_RESULTS_TOPIC]);

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
    const deadline = Date.parse(job.deadline);
    if (!Number.isNaN(deadline) && deadline <= clock.now()) {
      deps.logger.info(
        { correlation_id: job.correlationId, video_id: job.videoId },
        'expired extract job skipped',
      );
      return;
    }

    const base = {
      envelope: {
        eventId: randomUUID(),
        occurredAt: new Date(clock.now()).toISOString(),
        accountId: job.envelope?.accountId ?? '',
        idempotencyKey: job.envelope?.idempotencyKey ?? '',
        traceParent: message.headers.traceparent ?? job.envelope?.traceParent ?? '',
      },
      correlationId: job.correlationId,
      itemIndex: job.itemIndex,
      videoId: job.videoId,
      replyTo: job.replyTo,
    };
    let result: extractJobV1.ExtractResult;
    try {
      const t = await deps.extraction.getTranscript({
        videoId: job.videoId,
        language: job.language || 'en',
        include: job.include,
        forceRefresh: false,
        translate: false,
      });
      result = {
        ...base,
        success: true,
        language: t.language,
        subtitleType: t.subtitleType,
        segments: t.segments,
        metadata: t.metadata,
        errorCode: '',
        errorMessage: '',
      };
    } catch (err) {
      const code = isAppError(err) ? err.code : 'INTERNAL_ERROR';
      const publicMessage = isAppError(err) && err.isPublic ? err.message : 'An internal error occurred.';
      if (!isAppError(err))
        deps.logger.error({ err, video_id: job.videoId }, 'extract job failed unexpectedly');
      result = {
        ...base,
        success: false,
        language: '',
        subtitleType: 0,
        segments: [],
        metadata: undefined,
        errorCode: code,
        errorMessage: publicMessage,
      };
    }
    try {
      await deps.bus.publish(job.replyTopic || EXTRACT_RESULTS_TOPIC, [
        {
          key: job.replyTo,
          value: extractJobV1.ExtractResult.encode(result).finish(),
          headers: message.headers.traceparent ? { traceparent: message.headers.traceparent } : {},
        },
      ]);
    } catch (err) {
      throw new RetriableError('publishing the extract result failed', { cause: err });
    }
  }

  return deps.bus.subscribe({
    groupId: deps.groupId ?? EXTRACT_WORKERS_GROUP,
    topics: [topic],
    handler: handle,
  });
}
