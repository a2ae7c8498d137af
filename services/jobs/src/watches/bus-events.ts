/**
 * Watch lifecycle events on the bus (`watches.lifecycle.v1`, WatchLifecycleEvent, docs/events.md),
 * keyed by account so one watch's events stay in order. The event id is derived from the watch,
 * the type and the run, so a repeat is recognisable.
 */
import { CLOUD_EVENT_KINDS, cloudEventHeaders, watchLifecycleV1 } from '@subx/contracts';
import type { EventBus } from '@subx/ports';
import { currentTraceParent } from '@subx/service-kit';
import { eventIdOf } from '../jobs/bus-events.ts';
import type { WatchDoc, WatchRun } from './model.ts';
import type { WatchEventSink, WatchEventType } from './service.ts';

export function encodeWatchEvent(
  type: WatchEventType,
  watch: WatchDoc,
  run: WatchRun | null,
  occurredAtMs: number,
): Uint8Array {
  const event: watchLifecycleV1.WatchLifecycleEvent = {
    envelope: {
      eventId: eventIdOf(`${watch._id}:${type}:${run?.run ?? 0}`),
      occurredAt: new Date(occurredAtMs).toISOString(),
      accountId: watch.account_id,
      idempotencyKey: watch.request_id,
      traceParent: currentTraceParent() ?? '',
    },
    watchId: watch._id,
    type,
    sourceType: watch.source.type,
    newVideos: run?.new_videos ?? 0,
    jobId: run?.job_id ?? '',
    run: run?.run ?? 0,
    errorCode: run?.error?.code ?? '',
  };
  return watchLifecycleV1.WatchLifecycleEvent.encode(event).finish();
}

export function createBusWatchEvents(deps: {
  bus: EventBus;
  topic: string;
  clock: { now(): number };
}): WatchEventSink {
  return {
    async publish(type, watch, run) {
      const occurredAt = run?.at ?? deps.clock.now();
      const headers = cloudEventHeaders(CLOUD_EVENT_KINDS.watchEvents, {
        id: eventIdOf(`${watch._id}:${type}:${run?.run ?? 0}`),
        time: new Date(occurredAt).toISOString(),
        subject: watch._id,
      });
      await deps.bus.publish(deps.topic, [
        { key: watch.account_id, value: encodeWatchEvent(type, watch, run, occurredAt), headers },
      ]);
    },
  };
}
