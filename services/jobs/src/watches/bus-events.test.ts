import { describe, expect, it } from 'vitest';
import { watchLifecycleV1 } from '@subx/contracts';
import { createInProcessEventBus } from '@subx/ports';
import type { DeliveredMessage } from '@subx/ports';
import { eventIdOf } from '../jobs/bus-events.ts';
import type { WatchDoc, WatchRun } from './model.ts';
import { createBusWatchEvents, encodeWatchEvent } from './bus-events.ts';

const watch = {
  _id: 'wat_00000000a0123456789abcdef',
  account_id: 'acc_1',
  source: { type: 'search', query: 'cats' },
  request_id: 'req_1',
} as unknown as WatchDoc;
const run: WatchRun = { at: Date.UTC(2026, 11, 4), run: 3, new_videos: 4, job_id: 'job_x', error: null };

describe('watch lifecycle events', () => {
  it('encode a WatchLifecycleEvent with the run’s numbers and the account in the envelope', () => {
    const decoded = watchLifecycleV1.WatchLifecycleEvent.decode(
      encodeWatchEvent('watch.new_videos', watch, run, run.at),
    );
    expect(decoded).toMatchObject({
      watchId: watch._id,
      type: 'watch.new_videos',
      sourceType: 'search',
      newVideos: 4,
      jobId: 'job_x',
      run: 3,
      errorCode: '',
      envelope: {
        eventId: eventIdOf(`${watch._id}:watch.new_videos:3`),
        accountId: 'acc_1',
        occurredAt: '2026-12-04T00:00:00.000Z',
        idempotencyKey: 'req_1',
      },
    });
    const failed = watchLifecycleV1.WatchLifecycleEvent.decode(
      encodeWatchEvent(
        'watch.run_failed',
        watch,
        { ...run, job_id: null, error: { code: 'UPSTREAM_ERROR', message: 'x' } },
        0,
      ),
    );
    expect(failed).toMatchObject({ errorCode: 'UPSTREAM_ERROR', jobId: '' });
  });

  it('publish keyed by account with CloudEvents headers; each run has its own id', async () => {
    const bus = createInProcessEventBus();
    const got: DeliveredMessage[] = [];
    await bus.subscribe({
      groupId: 'g',
      topics: ['watches.lifecycle.v1'],
      handler: async (m) => void got.push(m),
    });
    const events = createBusWatchEvents({ bus, topic: 'watches.lifecycle.v1', clock: { now: () => 5 } });
    await events.publish('watch.new_videos', watch, run);
    await events.publish('watch.new_videos', watch, { ...run, run: 4 });
    await events.publish('watch.created', watch, null);
    await expect.poll(() => got.length).toBe(3);
    expect(got[0]!.key).toBe('acc_1');
    expect(got[0]!.headers).toEqual({
      ce_specversion: '1.0',
      ce_id: eventIdOf(`${watch._id}:watch.new_videos:3`),
      ce_source: '//subx/gateway',
      ce_type: 'com.subx.watch-lifecycle.v1',
      ce_time: new Date(run.at).toISOString(),
      ce_subject: watch._id,
      ce_dataschema: 'proto:subx.events.v1.WatchLifecycleEvent',
      'content-type': 'application/protobuf',
    });
    expect(got[1]!.headers.ce_id).not.toBe(got[0]!.headers.ce_id);
    expect(got[2]!.headers.ce_time).toBe(new Date(5).toISOString());
    await bus.close();
  });
});
