/**
 * gRPC ↔ the job service's API (subx.jobs.v1.JobsService): JSON documents as UTF-8 bytes both
 * ways, AppErrors in the trailing metadata (service-kit), the chunks streamed with backpressure.
 */
import type { JobServiceApi, JobServiceCaller } from '@subx/backends';
import { jobsV1 } from '@subx/contracts';
import { Errors } from '@subx/errors';
import { defineService } from '@subx/service-kit';
import type { ServiceRegistration } from '@subx/service-kit';

/** The bytes of one chunks message: lines are grouped up to this, so a message is never tiny or huge. */
const CHUNK_MESSAGE_BYTES = 64 * 1024;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });
const bytesOf = (document: unknown) => ({ jsonUtf8: encoder.encode(JSON.stringify(document)) });

function inputOf(bytes: Uint8Array): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch {
    throw Errors.invalidRequest('the input is not UTF-8 JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw Errors.invalidRequest('the input must be a JSON object');
  }
  return value as Record<string, unknown>;
}

function callerOf(account: jobsV1.Account | undefined): JobServiceCaller {
  if (!account) throw Errors.invalidRequest('account is required');
  return { id: account.id, tier: account.tier, ...(account.keyId ? { keyId: account.keyId } : {}) };
}

const pageOf = (page: jobsV1.Page | undefined) => ({
  limit: page?.limit ?? 0,
  ...(page?.cursor ? { cursor: page.cursor } : {}),
});

export function jobsServiceRegistration(api: JobServiceApi): ServiceRegistration {
  const { jobs, watches, webhookSecrets, accountData } = api;
  return defineService(jobsV1.JobsServiceService, {
    createJob: async (req) =>
      bytesOf(await jobs.create(callerOf(req.account), inputOf(req.inputJsonUtf8), req.requestId)),
    estimateJob: async (req) =>
      bytesOf(await jobs.estimate(callerOf(req.account), inputOf(req.inputJsonUtf8), req.requestId)),
    getJob: async (req) => bytesOf(await jobs.get(req.accountId, req.jobId)),
    listJobs: async (req) => bytesOf(await jobs.list(req.accountId, pageOf(req.page))),
    getJobResults: async (req) => bytesOf(await jobs.results(req.accountId, req.jobId, pageOf(req.page))),
    getJobResult: async (req) => {
      const { format, item } = await jobs.result(req.accountId, req.jobId, req.index);
      return { format, itemJsonUtf8: encoder.encode(JSON.stringify(item)) };
    },
    streamJobChunks: async (req, ctx, send, drained) => {
      const lines = await jobs.chunkLines(req.accountId, req.jobId);
      let pending: string[] = [];
      let size = 0;
      const flush = async () => {
        if (pending.length === 0) return;
        send({ ndjsonUtf8: encoder.encode(pending.join('')) });
        pending = [];
        size = 0;
        await drained();
      };
      for await (const line of lines) {
        if (ctx.signal.aborted) return;
        pending.push(line);
        size += line.length;
        if (size >= CHUNK_MESSAGE_BYTES) await flush();
      }
      await flush();
    },
    cancelJob: async (req) => bytesOf(await jobs.cancel(req.accountId, req.jobId)),
    cancelJobsCreatedWith: async (req) => ({ ids: await jobs.cancelCreatedWith(req.accountId, req.keyId) }),
    createWatch: async (req) =>
      bytesOf(await watches.create(callerOf(req.account), inputOf(req.inputJsonUtf8), req.requestId)),
    getWatch: async (req) => bytesOf(await watches.get(req.accountId, req.watchId)),
    listWatches: async (req) => bytesOf(await watches.list(req.accountId)),
    deleteWatch: async (req) => bytesOf(await watches.delete(req.accountId, req.watchId)),
    runWatch: async (req) => bytesOf(await watches.runNow(callerOf(req.account), req.watchId)),
    resumeWatch: async (req) => bytesOf(await watches.resume(req.accountId, req.watchId)),
    pauseWatchesCreatedWith: async (req) => ({
      ids: await watches.pauseCreatedWith(req.accountId, req.keyId),
    }),
    getWebhookSecret: async (req) =>
      bytesOf(
        await (req.metadataOnly
          ? webhookSecrets.metadata(req.accountId)
          : webhookSecrets.current(req.accountId)),
      ),
    rotateWebhookSecret: async (req) =>
      bytesOf(await webhookSecrets.rotate(req.accountId, { keepPrevious: req.keepPrevious })),
    deleteAccountData: async (req) => {
      const deleted = await accountData.delete(req.accountId);
      return {
        jobs: deleted.jobs,
        jobResults: deleted.job_results,
        watches: deleted.watches,
        webhookSecrets: deleted.webhook_secrets,
        webhookDeliveries: deleted.webhook_deliveries,
        canceledJobs: deleted.canceled_jobs,
        jobsStillHeld: deleted.jobs_still_held,
      };
    },
  });
}
