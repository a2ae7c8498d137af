import { describe, expect, it } from 'vitest';
import { jobLifecycleV1 } from '@subx/contracts';
import { createInProcessEventBus } from '@subx/ports';
import type { DeliveredMessage } from '@subx/ports';
import type { JobDoc } from './model.ts';
import { createBusJobEvents, encodeJobEvent, eventIdOf } from './bus-events.ts';

const job = {
  _id: 'job_00000000a0123456789abcdef',
  account_id: 'acc_1',
  status: 'completed',
  source: { type: 'playlist', url: 'https://www.youtube.com/playlist?list=PLx', max: 10 },
  total: 10,
  succeeded: 7,
  failed: 2,
  credits_charged: 7,
  error: null,
  request_id: 'req_1',
  created_at: 1,
  finished_at: 2,
} as unknown as JobDoc;

describe('job lifecycle events', () => {
  it('encode a JobLifecycleEvent with the job’s numbers and the account in the envelope', () => {
    const decoded = jobLifecycleV1.JobLifecycleEvent.decode(
      encodeJobEvent('job.completed', job, Date.UTC(2026, 10, 26)),
    );
    expect(decoded).toMatchObject({
      jobId: job._id,
      type: 'job.completed',
      status: 'completed',
      progress: { total: 10, succeeded: 7, failed: 2, pending: 1 },
      creditsCharged: 7n,
      sourceType: 'playlist',
      errorCode: '',
      envelope: { accountId: 'acc_1', occurredAt: '2026-11-26T00:00:00.000Z', idempotencyKey: 'req_1' },
    });
  });

  it('derive the event id from job and transition: a repeated notice repeats the id, another transition does not', () => {
    const id = eventIdOf(`${job._id}:job.completed`);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(eventIdOf(`${job._id}:job.completed`)).toBe(id);
    expect(eventIdOf(`${job._id}:job.started`)).not.toBe(id);
    const decoded = jobLifecycleV1.JobLifecycleEvent.decode(encodeJobEvent('job.completed', job, 0));
    expect(decoded.envelope?.eventId).toBe(id);
  });

  it('publish with CloudEvents headers: the same id and attributes when a notice repeats', async () => {
    const bus = createInProcessEventBus();
    const got: DeliveredMessage[] = [];
    await bus.subscribe({
      groupId: 'g',
      topics: ['jobs.lifecycle.v1'],
      handler: async (m) => void got.push(m),
    });
    const events = createBusJobEvents({ bus, topic: 'jobs.lifecycle.v1', clock: { now: () => 5 } });
    await events.publish('job.completed', job);
    await events.publish('job.completed', job);
    await expect.poll(() => got.length).toBe(2);
    expect(got[0]!.key).toBe('acc_1');
    expect(got[0]!.headers).toEqual({
      ce_specversion: '1.0',
      ce_id: eventIdOf(`${job._id}:job.completed`),
      ce_source: '//subx/gateway',
      ce_type: 'com.subx.job-lifecycle.v1',
      ce_time: new Date(2).toISOString(),
      ce_subject: job._id,
      ce_dataschema: 'proto:subx.events.v1.JobLifecycleEvent',
      'content-type': 'application/protobuf',
    });
    expect(got[1]!.headers).toEqual(got[0]!.headers);
    await bus.close();
  });
});
