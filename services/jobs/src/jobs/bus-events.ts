/**
 * Job lifecycle events on the bus (`jobs.lifecycle.v1`, JobLifecycleEvent, docs/events.md), keyed
 * by account so one job's events stay in order. The event id is derived from the job and the
 * transition, so the at-least-once terminal notices (notify.ts) repeat the same id and consumers
 * can drop repeats.
 */
import { createHash } from 'node:crypto';
import { CLOUD_EVENT_KINDS, cloudEventHeaders, jobLifecycleV1 } from '@subx/contracts';
import type { EventBus } from '@subx/ports';
import { currentTraceParent } from '@subx/service-kit';
import type { JobDoc } from './model.ts';
import type { JobEventSink, JobEventType } from './notify.ts';

/** A UUID (version 8, RFC 9562 "custom") from a name: the same name, the same id. */
export function eventIdOf(name: string): string {
  const bytes = createHash('sha256').update(name).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function encodeJobEvent(type: JobEventType, job: JobDoc, occurredAtMs: number): Uint8Array {
  const done = job.succeeded + job.failed;
  const event: jobLifecycleV1.JobLifecycleEvent = {
    envelope: {
      eventId: eventIdOf(`${job._id}:${type}`),
      occurredAt: new Date(occurredAtMs).toISOString(),
      accountId: job.account_id,
      idempotencyKey: job.request_id,
      traceParent: currentTraceParent() ?? '',
    },
    jobId: job._id,
    type,
    status: job.status,
    progress: {
      total: job.total ?? 0,
      succeeded: job.succeeded,
      failed: job.failed,
      pending: job.total === null ? 0 : Math.max(0, job.total - done),
    },
    creditsCharged: BigInt(job.credits_charged),
    sourceType: job.source.type,
    errorCode: job.error?.code ?? '',
  };
  return jobLifecycleV1.JobLifecycleEvent.encode(event).finish();
}

export function createBusJobEvents(deps: {
  bus: EventBus;
  topic: string;
  clock: { now(): number };
}): JobEventSink {
  return {
    async publish(type, job) {
      const occurredAt = type === 'job.created' ? job.created_at : (job.finished_at ?? deps.clock.now());
      const headers = cloudEventHeaders(CLOUD_EVENT_KINDS.jobEvents, {
        id: eventIdOf(`${job._id}:${type}`),
        time: new Date(occurredAt).toISOString(),
        subject: job._id,
      });
      await deps.bus.publish(deps.topic, [
        { key: job.account_id, value: encodeJobEvent(type, job, occurredAt), headers },
      ]);
    },
  };
}
