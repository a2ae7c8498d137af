/**
 * The job service behind its real gRPC server, called through the gateway's client
 * (@subx/backends createJobServiceClient): documents cross the boundary byte for byte as the
 * in-process API makes them, AppErrors keep their public code, a job runs to its end and its items
 * are charged once, and the chunks stream arrives whole.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createJobServiceClient } from '@subx/backends';
import type { JobServiceBackend } from '@subx/backends';
import { isAppError } from '@subx/errors';
import {
  createInMemoryDocumentStore,
  createInMemoryKeyValueStore,
  createInProcessEventBus,
} from '@subx/ports';
import { createLogger } from '@subx/service-kit';
import { loadJobServiceConfig, startJobService } from '../src/index.ts';
import type { RunningJobService } from '../src/index.ts';
import { ACCOUNT, PRO, VIDEOS, fakeExtractor, seedAccount, watchUrl } from './support.ts';

const running: { service: RunningJobService; client: JobServiceBackend }[] = [];
afterEach(async () => {
  for (const { service, client } of running.splice(0)) {
    client.close();
    await service.stop();
  }
});

async function start(options: { credits?: number } = {}) {
  const store = createInMemoryDocumentStore();
  await seedAccount(store, options.credits ?? 100);
  const calls: string[] = [];
  const config = loadJobServiceConfig(
    { GRPC_PORT: '0', JOBS_POLL_MS: '20', METRICS_PORT: 'off', LOG_LEVEL: 'silent' },
    { embedded: true },
  );
  const service = await startJobService({
    config,
    store,
    kv: createInMemoryKeyValueStore(),
    bus: createInProcessEventBus(),
    logger: createLogger({ service: 'jobs-test', level: 'silent' }),
    fanOut: 'direct',
    extractor: fakeExtractor(calls),
    host: '127.0.0.1',
    pepper: 'a-test-pepper-of-at-least-32-characters!!',
  });
  const client = createJobServiceClient({ address: `127.0.0.1:${service.port}`, deadlineMs: 5_000 });
  running.push({ service, client });
  return { service, client, store, calls };
}

async function finished(client: JobServiceBackend, jobId: string) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const job = await client.jobs.get(ACCOUNT, jobId);
    if (job.status === 'completed' || job.status === 'failed') return job;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${String(job.status)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function appErrorOf(promise: Promise<unknown>) {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(isAppError(error)).toBe(true);
  return error as { code: string; status: number };
}

describe('the job service refuses to start', () => {
  it('with a credit hold shorter than a job item may hold it, naming the variables', async () => {
    const config = loadJobServiceConfig(
      { GRPC_PORT: '0', METRICS_PORT: 'off', CREDIT_RESERVATION_TTL_MS: '120000' },
      { embedded: true },
    );
    await expect(
      startJobService({
        config,
        store: createInMemoryDocumentStore(),
        kv: createInMemoryKeyValueStore(),
        bus: createInProcessEventBus(),
        logger: createLogger({ service: 'jobs-test', level: 'silent' }),
        extractor: fakeExtractor([]),
        pepper: 'a-test-pepper-of-at-least-32-characters!!',
      }),
    ).rejects.toThrow(/CREDIT_RESERVATION_TTL_MS.*JOB_ROUND_TIMEOUT_MS/);
  });
});

describe('the job service over gRPC', () => {
  it('runs a job to its end, charging each delivered item once, and answers what the in-process API answers', async () => {
    const { service, client, store, calls } = await start();
    const input = {
      source: { type: 'urls', urls: [...VIDEOS.map(watchUrl), watchUrl(VIDEOS[0]!), 'not a url'] },
      options: {
        language: 'en',
        format: 'json',
        include_timestamps: true,
        include: [],
        translate: false,
        mode: 'captions',
        chunking: { maxTokens: 64, overlapTokens: 0, split: 'none' },
      },
    };
    const estimate = await client.jobs.estimate(PRO, input, 'req-estimate');
    expect(estimate).toMatchObject({ items: 4, duplicates_removed: 1 });

    const created = await client.jobs.create(PRO, input, 'req-create');
    expect(created).toMatchObject({ status: 'queued', progress: { total: 4 } });
    const jobId = String(created.job_id);
    const job = await finished(client, jobId);
    expect(job).toMatchObject({ status: 'completed', progress: { succeeded: 3, failed: 1, pending: 0 } });
    expect(job.credits_charged).toBe(3);
    expect(calls.sort()).toEqual([...VIDEOS].sort());
    const account = await store
      .collection<{ _id: string; credits: number }>('accounts')
      .findOne({ _id: ACCOUNT });
    expect(account?.credits).toBe(97);

    // The same documents as the API in this process makes, key order and all.
    expect(JSON.stringify(await client.jobs.get(ACCOUNT, jobId))).toBe(
      JSON.stringify(await service.api.jobs.get(ACCOUNT, jobId)),
    );
    const page = { limit: 2 };
    expect(JSON.stringify(await client.jobs.results(ACCOUNT, jobId, page))).toBe(
      JSON.stringify(await service.api.jobs.results(ACCOUNT, jobId, page)),
    );
    expect(JSON.stringify(await client.jobs.list(ACCOUNT, { limit: 10 }))).toBe(
      JSON.stringify(await service.api.jobs.list(ACCOUNT, { limit: 10 })),
    );
    const one = await client.jobs.result(ACCOUNT, jobId, 0);
    expect(one.format).toBe('json');
    expect(one.item).toMatchObject({ success: true, video_id: VIDEOS[0] });

    // Chunks: NDJSON, one line per chunk, the same lines as in-process.
    const viaGrpc: string[] = [];
    for await (const part of await client.jobs.chunkLines(ACCOUNT, jobId)) viaGrpc.push(part);
    const local: string[] = [];
    for await (const line of await service.api.jobs.chunkLines(ACCOUNT, jobId)) local.push(line);
    expect(viaGrpc.join('')).toBe(local.join(''));
    expect(local.length).toBeGreaterThanOrEqual(3);
    expect(
      viaGrpc
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).video_id),
    ).toEqual(expect.arrayContaining(VIDEOS));
  });

  it('keeps the public error codes across the boundary', async () => {
    const { client } = await start();
    const missing = await appErrorOf(client.jobs.get(ACCOUNT, 'job_000000000aaaaaaaaaaaaaaaa'));
    expect(missing.code).toBe('JOB_NOT_FOUND');
    expect(missing.status).toBe(404);
    const stranger = await appErrorOf(client.watches.get(ACCOUNT, 'wat_000000000aaaaaaaaaaaaaaaa'));
    expect(stranger.code).toBe('NOT_FOUND');
    const badTier = await appErrorOf(
      client.jobs.create(
        { ...PRO, tier: 'platinum' },
        { source: { type: 'urls', urls: [] }, options: {} },
        'r',
      ),
    );
    expect(badTier.code).toBe('INVALID_REQUEST');
    const shapeless = await appErrorOf(client.jobs.create(PRO, { source: 'urls' }, 'r'));
    expect(shapeless.code).toBe('INVALID_REQUEST');
    const badPage = await appErrorOf(client.jobs.list(ACCOUNT, { limit: 0 }));
    expect(badPage.code).toBe('INVALID_REQUEST');
  });

  it('a job of an empty balance stops, and nothing is charged below zero', async () => {
    const { client, store } = await start({ credits: 1 });
    const created = await client.jobs.create(
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
        },
      },
      'req-broke',
    );
    const job = await finished(client, String(created.job_id));
    expect(job.credits_charged).toBe(1);
    const account = await store
      .collection<{ _id: string; credits: number }>('accounts')
      .findOne({ _id: ACCOUNT });
    expect(account?.credits).toBe(0);
  });

  it('webhook secrets and watches of a key', async () => {
    const { client } = await start();
    const none = { exists: false, created_at: null, previous_secret_expires_at: null };
    expect(await client.webhookSecrets.metadata(ACCOUNT)).toEqual(none);
    // Asking for the metadata created nothing.
    expect(await client.webhookSecrets.metadata(ACCOUNT)).toEqual(none);
    const first = await client.webhookSecrets.current(ACCOUNT);
    expect(String(first.secret)).toMatch(/^whsec_/);
    expect((await client.webhookSecrets.current(ACCOUNT)).secret).toBe(first.secret);
    const rotated = await client.webhookSecrets.rotate(ACCOUNT, { keepPrevious: false });
    expect(rotated.secret).not.toBe(first.secret);
    expect(rotated.previous_secret_expires_at).toBeNull();
    expect(await client.webhookSecrets.metadata(ACCOUNT)).toEqual({
      exists: true,
      created_at: rotated.created_at,
      previous_secret_expires_at: null,
    });
    expect(await client.watches.list(ACCOUNT)).toEqual({ watches: [] });
    expect(await client.watches.pauseCreatedWith(ACCOUNT, 'key_one')).toEqual([]);
    expect(await client.jobs.cancelCreatedWith(ACCOUNT, 'key_one')).toEqual([]);
    expect(await client.checkHealth(1_000)).toBe(true);
  });

  it("deletes a workspace's jobs, results and secrets (DeleteAccountData); a second call finds nothing", async () => {
    const { client, store } = await start();
    const input = {
      source: { type: 'urls', urls: VIDEOS.map(watchUrl) },
      options: { language: 'en', format: 'json', include_timestamps: true, include: [], translate: false },
    };
    const jobId = String((await client.jobs.create(PRO, input, 'req-erase')).job_id);
    await finished(client, jobId);
    await client.webhookSecrets.current(ACCOUNT);

    expect(await client.accountData.delete(ACCOUNT)).toEqual({
      jobs: 1,
      job_results: VIDEOS.length,
      watches: 0,
      webhook_secrets: 1,
      webhook_deliveries: 0,
      canceled_jobs: 0,
      jobs_still_held: 0,
    });
    expect((await appErrorOf(client.jobs.get(ACCOUNT, jobId))).code).toBe('JOB_NOT_FOUND');
    expect(await store.collection('job_results').countDocuments({ job_id: jobId })).toBe(0);
    expect(await store.collection('job_items').countDocuments({ _id: jobId })).toBe(0);
    expect(await client.webhookSecrets.metadata(ACCOUNT)).toMatchObject({ exists: false });
    expect(await client.accountData.delete(ACCOUNT)).toMatchObject({
      jobs: 0,
      job_results: 0,
      webhook_secrets: 0,
    });
    expect((await appErrorOf(client.accountData.delete('not-an-account'))).code).toBe('INVALID_REQUEST');
  });
});
