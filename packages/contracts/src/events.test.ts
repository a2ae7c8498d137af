import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONSUMER_GROUPS, TOPICS, jobLifecycleV1 } from './index.ts';

const eventsProtoDir = fileURLToPath(new URL('../../../proto/subx/events/v1/', import.meta.url));

describe('bulk job lifecycle event (subx.events.v1.JobLifecycleEvent)', () => {
  const event: jobLifecycleV1.JobLifecycleEvent = {
    envelope: {
      eventId: '5f0c7a4e-7d1b-4c55-9a38-2b1f0a6d9e01',
      occurredAt: '2026-11-26T19:30:00.000Z',
      accountId: 'acc-1',
      idempotencyKey: 'idem-1',
      traceParent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    },
    jobId: 'job_01',
    type: 'job.completed',
    status: 'completed',
    progress: { total: 10_000, succeeded: 9_997, failed: 3, pending: 0 },
    // Past 2^53: int64 is a bigint (forceLong=bigint), never a rounded number.
    creditsCharged: 9_007_199_254_740_993n,
    sourceType: 'channel',
    errorCode: '',
  };

  it('survives an encode/decode round trip unchanged, credits as an exact bigint', () => {
    const decoded = jobLifecycleV1.JobLifecycleEvent.decode(
      jobLifecycleV1.JobLifecycleEvent.encode(event).finish(),
    );
    expect(decoded).toEqual(event);
    expect(decoded.creditsCharged).toBe(9_007_199_254_740_993n);
  });

  it('reads a failed job with its error code, and absent fields as their zero values', () => {
    const failed = jobLifecycleV1.JobLifecycleEvent.decode(
      jobLifecycleV1.JobLifecycleEvent.encode(
        jobLifecycleV1.JobLifecycleEvent.fromPartial({
          jobId: 'job_02',
          type: 'job.failed',
          status: 'failed',
          errorCode: 'CHANNEL_NOT_FOUND',
        }),
      ).finish(),
    );
    expect(failed).toMatchObject({
      jobId: 'job_02',
      type: 'job.failed',
      status: 'failed',
      errorCode: 'CHANNEL_NOT_FOUND',
      creditsCharged: 0n,
      sourceType: '',
    });
    expect(failed.progress).toBeUndefined();
  });
});

describe('bus names', () => {
  it('names each topic and consumer group once, each under a variable of its own', () => {
    for (const names of [Object.values(TOPICS), Object.values(CONSUMER_GROUPS)]) {
      expect(new Set(names.map((n) => n.default)).size).toBe(names.length);
    }
    const topicEnvs = Object.values(TOPICS).map((n) => n.env);
    expect(new Set(topicEnvs).size).toBe(topicEnvs.length);
  });

  it('gives bulk jobs a topic and a worker group apart from batch and playlist jobs', () => {
    expect(TOPICS.extractBulkJobs).toEqual({
      env: 'EXTRACT_BULK_JOBS_TOPIC',
      default: 'extract.bulk-jobs.v1',
    });
    expect(TOPICS.jobEvents).toEqual({ env: 'JOB_EVENTS_TOPIC', default: 'jobs.lifecycle.v1' });
    expect(CONSUMER_GROUPS.extractBulkWorkers).toEqual({
      env: 'EXTRACT_BULK_WORKERS_GROUP',
      default: 'extractor-bulk-workers',
    });
    expect(TOPICS.extractBulkJobs.default).not.toBe(TOPICS.extractJobs.default);
    expect(CONSUMER_GROUPS.extractBulkWorkers.default).not.toBe(CONSUMER_GROUPS.extractWorkers.default);
  });

  it('every topic an event schema names ("Topic <name>") is one of TOPICS, and every event file names one', () => {
    const defaults = new Set(Object.values(TOPICS).map((n) => n.default));
    const files = readdirSync(eventsProtoDir).filter((f) => f.endsWith('.proto') && f !== 'envelope.proto');
    expect(files).toContain('job_lifecycle.proto');
    for (const file of files) {
      const text = readFileSync(`${eventsProtoDir}${file}`, 'utf8');
      const named = [...text.matchAll(/\btopic ([a-z0-9.-]+\.v\d+)\b/gi)].map((m) => m[1]!);
      expect(named.length, file).toBeGreaterThan(0);
      for (const topic of named) expect(defaults, `${file} names ${topic}`).toContain(topic);
    }
  });
});
