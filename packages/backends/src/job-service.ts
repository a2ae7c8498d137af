/**
 * The job service (services/jobs) as the gateway calls it: bulk jobs, watches and the webhook
 * signing secrets of an account. Its answers are the public API's JSON documents, which the job
 * service owns and the gateway forwards as they are (proto/subx/jobs/v1/jobs_service.proto).
 *
 * Two implementations: the gRPC client below, and the job service's own in-process API
 * (`@subx/jobs`, `createJobServiceApi`), which the gRPC server wraps and the gateway's route tests
 * call directly.
 */
import type * as grpc from '@grpc/grpc-js';
import { jobsV1 } from '@subx/contracts';
import { createGrpcClient, fromGrpcError } from '@subx/service-kit';
import type { Logger } from '@subx/ports';
import { healthy } from './grpc.ts';
import type { HealthCheck } from './types.ts';

/** A JSON document of the public API: a job, a page of jobs or results, a watch, a secret. */
export type JsonDocument = Record<string, unknown>;

/** The caller as the gateway resolved it. */
export interface JobServiceCaller {
  id: string;
  tier: string;
  /** The API key the call came with; absent when the admin token acts for the account. */
  keyId?: string;
}

/** A job's or a watch's input as the public API validated it. */
export type JobServiceInput = Record<string, unknown>;

export interface PageRequest {
  limit: number;
  cursor?: string;
}

export interface JobsApi {
  create(account: JobServiceCaller, input: JobServiceInput, requestId: string): Promise<JsonDocument>;
  /** The dry run of create: the same checks, then the job's size and price; nothing is created. */
  estimate(account: JobServiceCaller, input: JobServiceInput, requestId: string): Promise<JsonDocument>;
  get(accountId: string, jobId: string): Promise<JsonDocument>;
  list(accountId: string, page: PageRequest): Promise<JsonDocument>;
  results(accountId: string, jobId: string, page: PageRequest): Promise<JsonDocument>;
  /** One finished item, with the output format the job asked for. */
  result(accountId: string, jobId: string, index: number): Promise<{ format: string; item: JsonDocument }>;
  /** The chunks of the finished items, one NDJSON line at a time, in source order. */
  chunkLines(accountId: string, jobId: string): Promise<AsyncIterable<string>>;
  cancel(accountId: string, jobId: string): Promise<JsonDocument>;
  /** Cancels the account's queued and running jobs created with this key; their ids. */
  cancelCreatedWith(accountId: string, keyId: string): Promise<string[]>;
}

export interface WatchesApi {
  create(account: JobServiceCaller, input: JobServiceInput, requestId: string): Promise<JsonDocument>;
  get(accountId: string, watchId: string): Promise<JsonDocument>;
  list(accountId: string): Promise<JsonDocument>;
  delete(accountId: string, watchId: string): Promise<JsonDocument>;
  /** Runs the watch now: 409 CONFLICT while another run of it is under way. */
  runNow(account: JobServiceCaller, watchId: string): Promise<JsonDocument>;
  /** Runs a paused watch again, the next run at once. */
  resume(accountId: string, watchId: string): Promise<JsonDocument>;
  /** Pauses the account's watches created with this key; their ids. */
  pauseCreatedWith(accountId: string, keyId: string): Promise<string[]>;
}

export interface WebhookSecretsApi {
  /** The current secret, created on first need. */
  current(accountId: string): Promise<JsonDocument>;
  /**
   * `{ exists, created_at, previous_secret_expires_at }`: never the secret; an account without
   * one is answered `exists: false` and still has none (the account's export).
   */
  metadata(accountId: string): Promise<JsonDocument>;
  /** A new current secret; with `keepPrevious: false` no older one signs any more. */
  rotate(accountId: string, options?: { keepPrevious?: boolean }): Promise<JsonDocument>;
}

/** What DeleteAccountData deleted, per kind. */
export interface AccountDataDeleted {
  jobs: number;
  job_results: number;
  watches: number;
  webhook_secrets: number;
  webhook_deliveries: number;
  /** Of `jobs`, those that were queued or running and were canceled first. */
  canceled_jobs: number;
  /** Canceled jobs a runner still held when the wait for them ended: deleted anyway. */
  jobs_still_held: number;
}

/** Nothing deleted yet (or nothing there): every count zero. */
export const nothingDeleted = (): AccountDataDeleted => ({
  jobs: 0,
  job_results: 0,
  watches: 0,
  webhook_secrets: 0,
  webhook_deliveries: 0,
  canceled_jobs: 0,
  jobs_still_held: 0,
});

export interface AccountDataApi {
  /**
   * A workspace being deleted: its watches, jobs (canceled first) with their items and results,
   * webhook deliveries and secrets. Safe to repeat; a second call answers zeros.
   */
  delete(accountId: string): Promise<AccountDataDeleted>;
}

export interface JobServiceApi {
  jobs: JobsApi;
  watches: WatchesApi;
  webhookSecrets: WebhookSecretsApi;
  accountData: AccountDataApi;
}

export interface JobServiceBackend extends JobServiceApi, HealthCheck {
  /** False when the channel is in TRANSIENT_FAILURE (readiness). */
  channelHealthy(): boolean;
  close(): void;
}

export interface JobServiceClientOptions {
  address: string;
  /** Deadline of each call but the chunks' download. */
  deadlineMs: number;
  /** Deadline of a whole chunks download (a large job's NDJSON is streamed a page at a time). */
  streamDeadlineMs?: number;
  logger?: Logger;
  credentials?: grpc.ChannelCredentials;
  channelOptions?: grpc.ChannelOptions;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();
const documentOf = (bytes: Uint8Array): JsonDocument => JSON.parse(decoder.decode(bytes)) as JsonDocument;
const bytesOf = (value: unknown): Uint8Array => encoder.encode(JSON.stringify(value));
const callerOf = (account: JobServiceCaller): jobsV1.Account => ({
  id: account.id,
  tier: account.tier,
  keyId: account.keyId ?? '',
});
const pageOf = (page: PageRequest): jobsV1.Page => ({ limit: page.limit, cursor: page.cursor ?? '' });
/** A create call's request: the caller, the validated input, the call's id. */
const inputOf = (account: JobServiceCaller, input: JobServiceInput, requestId: string) => ({
  account: callerOf(account),
  inputJsonUtf8: bytesOf(input),
  requestId,
});

/** The job service over gRPC (JOBS_GRPC_ADDR). */
export function createJobServiceClient(options: JobServiceClientOptions): JobServiceBackend {
  const client = createGrpcClient(jobsV1.JobsServiceClient, options.address, {
    defaultDeadlineMs: options.deadlineMs,
    label: 'jobs',
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.credentials ? { credentials: options.credentials } : {}),
    ...(options.channelOptions ? { channelOptions: options.channelOptions } : {}),
  });
  const streamDeadlineMs = options.streamDeadlineMs ?? 10 * 60_000;

  async function* chunkStream(accountId: string, jobId: string): AsyncGenerator<string> {
    const call = client.raw.streamJobChunks(
      { accountId, jobId },
      { deadline: new Date(Date.now() + streamDeadlineMs) },
    );
    try {
      for await (const message of call as AsyncIterable<jobsV1.StreamJobChunksResponse>) {
        yield decoder.decode(message.ndjsonUtf8);
      }
    } catch (error) {
      throw fromGrpcError(error, 'jobs');
    } finally {
      call.cancel();
    }
  }

  return {
    jobs: {
      create: async (account, input, requestId) =>
        documentOf((await client.createJob(inputOf(account, input, requestId), { requestId })).jsonUtf8),
      estimate: async (account, input, requestId) =>
        documentOf((await client.estimateJob(inputOf(account, input, requestId), { requestId })).jsonUtf8),
      get: async (accountId, jobId) => documentOf((await client.getJob({ accountId, jobId })).jsonUtf8),
      list: async (accountId, page) =>
        documentOf((await client.listJobs({ accountId, page: pageOf(page) })).jsonUtf8),
      results: async (accountId, jobId, page) =>
        documentOf((await client.getJobResults({ accountId, jobId, page: pageOf(page) })).jsonUtf8),
      result: async (accountId, jobId, index) => {
        const answer = await client.getJobResult({ accountId, jobId, index });
        return { format: answer.format, item: documentOf(answer.itemJsonUtf8) };
      },
      chunkLines: async (accountId, jobId) => {
        // The first message (or the error: an unknown job, results expired) arrives before the
        // route answers, so a 404 is a 404 and not a 200 cut short.
        const stream = chunkStream(accountId, jobId);
        const first = await stream.next();
        return (async function* () {
          if (first.done) return;
          yield first.value;
          yield* stream;
        })();
      },
      cancel: async (accountId, jobId) => documentOf((await client.cancelJob({ accountId, jobId })).jsonUtf8),
      cancelCreatedWith: async (accountId, keyId) =>
        (await client.cancelJobsCreatedWith({ accountId, keyId })).ids,
    },
    watches: {
      create: async (account, input, requestId) =>
        documentOf((await client.createWatch(inputOf(account, input, requestId), { requestId })).jsonUtf8),
      get: async (accountId, watchId) => documentOf((await client.getWatch({ accountId, watchId })).jsonUtf8),
      list: async (accountId) => documentOf((await client.listWatches({ accountId })).jsonUtf8),
      delete: async (accountId, watchId) =>
        documentOf((await client.deleteWatch({ accountId, watchId })).jsonUtf8),
      runNow: async (account, watchId) =>
        documentOf((await client.runWatch({ account: callerOf(account), watchId })).jsonUtf8),
      resume: async (accountId, watchId) =>
        documentOf((await client.resumeWatch({ accountId, watchId })).jsonUtf8),
      pauseCreatedWith: async (accountId, keyId) =>
        (await client.pauseWatchesCreatedWith({ accountId, keyId })).ids,
    },
    webhookSecrets: {
      current: async (accountId) =>
        documentOf((await client.getWebhookSecret({ accountId, metadataOnly: false })).jsonUtf8),
      metadata: async (accountId) =>
        documentOf((await client.getWebhookSecret({ accountId, metadataOnly: true })).jsonUtf8),
      rotate: async (accountId, rotation) =>
        documentOf(
          (
            await client.rotateWebhookSecret({
              accountId,
              keepPrevious: rotation?.keepPrevious ?? true,
            })
          ).jsonUtf8,
        ),
    },
    accountData: {
      delete: async (accountId) => {
        const deleted = await client.deleteAccountData({ accountId });
        return {
          jobs: deleted.jobs,
          job_results: deleted.jobResults,
          watches: deleted.watches,
          webhook_secrets: deleted.webhookSecrets,
          webhook_deliveries: deleted.webhookDeliveries,
          canceled_jobs: deleted.canceledJobs,
          jobs_still_held: deleted.jobsStillHeld,
        };
      },
    },
    checkHealth: (timeoutMs) => healthy(client, jobsV1.JobsServiceClient.serviceName, timeoutMs),
    channelHealthy: () => client.connectivityState() !== 'TRANSIENT_FAILURE',
    close: () => client.close(),
  };
}
