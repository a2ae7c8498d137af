/**
 * A workspace's data retention in the job service (src/retention): a job's results and chunks
 * expire by the account's settings, a lowered setting shortens what is stored and the sweep deletes
 * it, counting what it removed (`subx_retention_swept_total`), a raised one brings nothing back,
 * and a watch forgets what it found before its `watch_history_days`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { StoredRetention } from '@subx/contracts/retention';
import {
  ManualClock,
  createInMemoryDocumentStore,
  createInMemoryKeyValueStore,
  createInProcessEventBus,
} from '@subx/ports';
import type { DocumentStore } from '@subx/ports';
import { createLogger, scrape } from '@subx/service-kit';
import { loadJobServiceConfig, startJobService } from '../src/index.ts';
import type { RunningJobService } from '../src/index.ts';
import { ACCOUNT, PRO, VIDEOS, fakeExtractor, seedAccount, watchUrl } from './support.ts';

const DAY_MS = 86_400_000;
const running: RunningJobService[] = [];
afterEach(async () => {
  for (const service of running.splice(0)) await service.stop();
});

async function swept(kind: string): Promise<number> {
  const line = (await scrape())
    .split('\n')
    .find((l) => l.startsWith(`subx_retention_swept_total{kind="${kind}"} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

async function lastRun(): Promise<number> {
  const line = (await scrape())
    .split('\n')
    .find((l) => l.startsWith('subx_retention_last_run_timestamp_seconds '));
  return line ? Number(line.split(' ')[1]) : 0;
}

async function start(retention: StoredRetention) {
  const store = createInMemoryDocumentStore();
  const clock = new ManualClock(Date.now());
  await seedAccount(store, 100, retention);
  const config = loadJobServiceConfig(
    {
      GRPC_PORT: '0',
      JOBS_POLL_MS: '20',
      // The scheduler stays out of the way: the test writes the watch's history itself.
      WATCHES_POLL_MS: '1h',
      METRICS_PORT: 'off',
      LOG_LEVEL: 'silent',
    },
    { embedded: true },
  );
  const service = await startJobService({
    config,
    store,
    kv: createInMemoryKeyValueStore(),
    bus: createInProcessEventBus(),
    logger: createLogger({ service: 'jobs-test', level: 'silent' }),
    clock,
    fanOut: 'direct',
    extractor: fakeExtractor([]),
    host: '127.0.0.1',
    pepper: 'a-test-pepper-of-at-least-32-characters!!',
  });
  running.push(service);
  // The run the service starts with: done before the test writes what the next ones see.
  await service.retention.runOnce();
  return { service, store, clock };
}

/** Changes the account's settings as the gateway does: the fields and when. */
async function setRetention(store: DocumentStore, retention: StoredRetention): Promise<void> {
  await store.collection('accounts').updateOne({ _id: ACCOUNT }, { $set: { retention } });
}

async function finishedJob(service: RunningJobService): Promise<Record<string, unknown>> {
  const created = await service.api.jobs.create(
    PRO,
    {
      source: { type: 'urls', urls: VIDEOS.map(watchUrl) },
      options: {
        language: 'en',
        format: 'json',
        include_timestamps: true,
        include: [],
        translate: false,
        mode: 'captions',
        chunking: { maxTokens: 64, overlapTokens: 0, split: 'none' },
      },
    },
    'req-retention',
  );
  const deadline = Date.now() + 15_000;
  for (;;) {
    const job = await service.api.jobs.get(ACCOUNT, String(created.job_id));
    if (job.status === 'completed') return job;
    if (Date.now() > deadline) throw new Error(`job still ${String(job.status)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => 'ok',
    (e: { code?: string }) => e.code,
  );

describe('the retention of a job', () => {
  it('keeps results and chunks as the account says; lowering deletes, counted; raising brings nothing back', async () => {
    const { service, store, clock } = await start({ job_results_days: 2, chunks_days: 1, changed_at: 0 });
    const job = await finishedJob(service);
    const jobId = String(job.job_id);
    expect(Date.parse(String(job.expires_at)) - Date.parse(String(job.finished_at))).toBe(2 * DAY_MS);
    const page = await service.api.jobs.results(ACCOUNT, jobId, { limit: 10 });
    expect((page.results as Record<string, unknown>[])[0]).toHaveProperty('chunks');

    // A day on: the chunks are over, the results are still there.
    clock.advance(DAY_MS + 1);
    expect(await codeOf(service.api.jobs.chunkLines(ACCOUNT, jobId))).toBe('JOB_EXPIRED');
    const later = await service.api.jobs.results(ACCOUNT, jobId, { limit: 10 });
    expect(later.results).toHaveLength(3);
    expect((later.results as Record<string, unknown>[])[0]).not.toHaveProperty('chunks');
    const chunksBefore = await swept('chunks');
    const resultsBefore = await swept('job_results');
    expect(await service.retention.runOnce()).toMatchObject({ chunks: 1, job_results: 0 });
    expect((await swept('chunks')) - chunksBefore).toBe(1);
    // Nothing left to close or delete: a second run counts nothing.
    expect(await service.retention.runOnce()).toMatchObject({ chunks: 0, job_results: 0 });

    // Lowered to a day: the results, older than that now, go at the next run.
    await setRetention(store, { job_results_days: 1, chunks_days: 1, changed_at: clock.now() });
    expect(await service.retention.runOnce()).toMatchObject({ job_results: 3, accounts: 1 });
    expect((await swept('job_results')) - resultsBefore).toBe(3);
    expect(await lastRun()).toBe(clock.now() / 1000);
    expect(await codeOf(service.api.jobs.results(ACCOUNT, jobId, { limit: 10 }))).toBe('JOB_EXPIRED');
    const shortened = await service.api.jobs.get(ACCOUNT, jobId);
    expect(Date.parse(String(shortened.expires_at)) - Date.parse(String(job.finished_at))).toBe(DAY_MS);
    expect(await store.collection('job_results').countDocuments({ job_id: jobId })).toBe(0);

    // Raised again: what is gone stays gone, and the expiry stays where it was.
    await setRetention(store, { job_results_days: 30, changed_at: clock.now() + 1 });
    await service.retention.runOnce();
    expect(await codeOf(service.api.jobs.results(ACCOUNT, jobId, { limit: 10 }))).toBe('JOB_EXPIRED');
    expect((await service.api.jobs.get(ACCOUNT, jobId)).expires_at).toBe(shortened.expires_at);
  });

  it('without settings keeps the deployment’s JOB_RESULTS_TTL', async () => {
    const { service } = await start({ changed_at: 0 });
    const job = await finishedJob(service);
    expect(Date.parse(String(job.expires_at)) - Date.parse(String(job.finished_at))).toBe(7 * DAY_MS);
  });
});

describe('the retention of a watch’s history', () => {
  it('forgets what it found before watch_history_days, counted, and keeps the rest', async () => {
    const { service, store, clock } = await start({ watch_history_days: 3, changed_at: 0 });
    const created = await service.api.watches.create(
      PRO,
      {
        source: { type: 'channel', url: 'https://www.youtube.com/@example' },
        interval_minutes: 60,
        backfill: false,
        options: { language: 'en', format: 'json', include_timestamps: true, include: [], translate: false },
      },
      'req-watch',
    );
    const watchId = String(created.watch_id);
    const now = clock.now();
    // Two videos found now, two ten days ago, one still followed since then.
    await store.collection('watches').updateOne(
      { _id: watchId },
      {
        $set: {
          seen: ['new1', 'new2', 'old1', 'old2'],
          seen_marks: [
            { at: now, count: 2 },
            { at: now - 10 * DAY_MS, count: 2 },
          ],
          pending: [
            { video_id: 'new1', first_seen: now, job_id: 'job_a' },
            { video_id: 'old1', first_seen: now - 10 * DAY_MS, job_id: null },
          ],
          lease_until: 0,
        },
      },
    );
    const before = await swept('watch_history');
    expect(await service.retention.runOnce()).toMatchObject({ watch_history: 3 });
    expect((await swept('watch_history')) - before).toBe(3);
    const watch = await service.api.watches.get(ACCOUNT, watchId);
    expect(watch).toMatchObject({ seen_videos: 2, pending_videos: 1 });
    // Trimmed: not looked at again until its next check.
    expect(await service.retention.runOnce()).toMatchObject({ watch_history: 0 });

    // The setting cleared: the watch keeps its history as long as it exists.
    await setRetention(store, { changed_at: clock.now() });
    clock.advance(30 * DAY_MS);
    await service.retention.runOnce();
    expect(await service.api.watches.get(ACCOUNT, watchId)).toMatchObject({ seen_videos: 2 });
  });
});
