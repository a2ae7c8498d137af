/**
 * The job service's API in this process (JobServiceApi of @subx/backends): what the gRPC server
 * serves, and what the gateway's route tests call directly. It checks what crosses the boundary
 * (the caller's tier, the inputs' shape) and maps the rooms' answers to the public documents.
 */
import type { JobsPage, WatchList, WebhookSecret } from '@subx/contracts/admin-api';
import { Errors } from '@subx/errors';
import type {
  AccountDataApi,
  ExtractorBackend,
  JobServiceApi,
  JobServiceCaller,
  JobsApi,
  JsonDocument,
  WatchesApi,
  WebhookSecretsApi,
} from '@subx/backends';
import { TIERS, durationsFrom } from '@subx/credits';
import type { Account, Tier } from '@subx/credits';
import type { CreateJobInput, JobsService } from './jobs/service.ts';
import type { CreateWatchInput, WatchesService } from './watches/service.ts';
import type { WebhookSecrets } from './webhooks/index.ts';

/** Page sizes the public API allows (checked by the gateway's schema, and again here). */
const MAX_PAGE = 100;

function accountOf(caller: JobServiceCaller): Account {
  if (typeof caller.id !== 'string' || caller.id === '')
    throw Errors.invalidRequest('account id is required');
  if (!(TIERS as readonly string[]).includes(caller.tier)) {
    throw Errors.invalidRequest(`unknown tier ${JSON.stringify(caller.tier)}`);
  }
  return { id: caller.id, tier: caller.tier as Tier, ...(caller.keyId ? { keyId: caller.keyId } : {}) };
}

function inputOf<T>(input: unknown, what: string): T {
  const value = input as { source?: { type?: unknown }; options?: unknown } | null;
  if (
    typeof value !== 'object' ||
    value === null ||
    typeof value.source !== 'object' ||
    value.source === null ||
    typeof value.source.type !== 'string' ||
    typeof value.options !== 'object' ||
    value.options === null
  ) {
    throw Errors.invalidRequest(`the ${what} must have a source with a type and options`);
  }
  return value as T;
}

function pageOf(page: { limit: number; cursor?: string }): { limit: number; cursor?: string } {
  const limit = Math.trunc(page.limit);
  if (!(limit >= 1 && limit <= MAX_PAGE)) throw Errors.invalidRequest(`limit must be 1..${MAX_PAGE}`);
  return { limit, ...(page.cursor ? { cursor: page.cursor } : {}) };
}

const documentOf = (value: object): JsonDocument => value as JsonDocument;

/**
 * The admin API's contract (@subx/contracts/admin-api) describes some of these documents for the
 * dashboard: checked here, where they are made, since they cross gRPC as JSON. Its objects are
 * open (the public ones have more fields), so only the promised fields are compared.
 */
type Promised<T> = { [K in keyof T as string extends K ? never : K]: T[K] };
type PromisedJobsPage = Omit<JobsPage, 'jobs'> & { jobs: Promised<JobsPage['jobs'][number]>[] };
type PromisedWatchList = { watches: Promised<WatchList['watches'][number]>[] };
type DocumentsKeepTheAdminContract = [
  Awaited<ReturnType<JobsService['list']>> extends PromisedJobsPage ? true : never,
  Awaited<ReturnType<WatchesService['list']>> extends PromisedWatchList ? true : never,
  Awaited<ReturnType<WebhookSecrets['current']>> extends WebhookSecret ? true : never,
];
const contractKept: DocumentsKeepTheAdminContract = [true, true, true];
void contractKept;

/** Bulk jobs through the API: the caller and inputs checked, a dry run's durations looked up. */
export function jobsApiOf(
  jobs: JobsService,
  deps: {
    /** Durations for a dry run's price, through the extractor. */
    extractor: Pick<ExtractorBackend, 'validateVideo'>;
    /** Each duration lookup's deadline. */
    lookupDeadlineMs: number;
  },
): JobsApi {
  return {
    create: async (caller, input, requestId) =>
      documentOf(await jobs.create(accountOf(caller), inputOf<CreateJobInput>(input, 'job'), requestId)),
    estimate: async (caller, input, requestId) =>
      documentOf(
        await jobs.estimate(
          accountOf(caller),
          inputOf<CreateJobInput>(input, 'job'),
          durationsFrom(deps.extractor, requestId, deps.lookupDeadlineMs),
        ),
      ),
    get: async (accountId, jobId) => documentOf(await jobs.get(accountId, jobId)),
    list: async (accountId, page) => documentOf(await jobs.list(accountId, pageOf(page))),
    results: async (accountId, jobId, page) => documentOf(await jobs.results(accountId, jobId, pageOf(page))),
    result: async (accountId, jobId, index) => {
      const { job, item } = await jobs.result(accountId, jobId, index);
      return { format: job.options.format, item };
    },
    chunkLines: (accountId, jobId) => jobs.chunkLines(accountId, jobId),
    cancel: async (accountId, jobId) => documentOf(await jobs.cancel(accountId, jobId)),
    cancelCreatedWith: (accountId, keyId) => jobs.cancelCreatedWith(accountId, keyId),
  };
}

export function watchesApiOf(watches: WatchesService): WatchesApi {
  return {
    create: async (caller, input, requestId) =>
      documentOf(
        await watches.create(accountOf(caller), inputOf<CreateWatchInput>(input, 'watch'), requestId),
      ),
    get: async (accountId, watchId) => documentOf(await watches.get(accountId, watchId)),
    list: async (accountId) => documentOf(await watches.list(accountId)),
    delete: async (accountId, watchId) => documentOf(await watches.delete(accountId, watchId)),
    runNow: async (caller, watchId) => documentOf(await watches.runNow(accountOf(caller), watchId)),
    resume: async (accountId, watchId) => documentOf(await watches.resume(accountId, watchId)),
    pauseCreatedWith: (accountId, keyId) => watches.pauseCreatedWith(accountId, keyId),
  };
}

export function webhookSecretsApiOf(secrets: WebhookSecrets): WebhookSecretsApi {
  return {
    current: async (accountId) => documentOf(await secrets.current(accountId)),
    metadata: async (accountId) => documentOf(await secrets.metadata(accountId)),
    rotate: async (accountId, options) => documentOf(await secrets.rotate(accountId, options)),
  };
}

export function createJobServiceApi(deps: {
  jobs: JobsService;
  watches: WatchesService;
  secrets: WebhookSecrets;
  /** Deletes a workspace's data (account-data.ts). */
  eraseAccountData: AccountDataApi['delete'];
  extractor: Pick<ExtractorBackend, 'validateVideo'>;
  lookupDeadlineMs: number;
}): JobServiceApi {
  return {
    jobs: jobsApiOf(deps.jobs, deps),
    watches: watchesApiOf(deps.watches),
    webhookSecrets: webhookSecretsApiOf(deps.secrets),
    accountData: { delete: deps.eraseAccountData },
  };
}
