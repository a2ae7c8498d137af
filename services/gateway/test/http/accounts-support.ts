/**
 * A gateway on the real access module (in-memory stores) with the audit log and the job service's
 * jobs, watches, webhook secrets and runner in process: what the named keys', the audit log's and
 * the export's tests call through the public routes.
 */
import { DEFAULT_PRICING } from '@subx/credits';
import { createDirectFanOut } from '@subx/fanout';
import {
  ManualClock,
  createInMemoryDocumentStore,
  createInMemoryKeyValueStore,
  createInProcessEventBus,
  silentLogger,
} from '@subx/ports';
import type { DocumentStore, InMemoryKeyValueStore } from '@subx/ports';
import type { JobServiceApi } from '@subx/backends';
import { createAuditLog } from '../../src/audit/audit-log.ts';
import type { AuditLogModule } from '../../src/audit/audit-log.ts';
import { startReplicas } from '../access/support.ts';
import type { Replicas } from '../access/support.ts';
import { buildTestGateway, createFakeBackends } from './support.ts';
import type { TestGateway } from './support.ts';
import { loadJobServiceConfig } from '../../../jobs/src/config.ts';
import { createJobNotifier } from '../../../jobs/src/jobs/notify.ts';
import { createJobRunner } from '../../../jobs/src/jobs/runner.ts';
import type { JobRunner } from '../../../jobs/src/jobs/runner.ts';
import { createJobsService } from '../../../jobs/src/jobs/service.ts';
import type { JobsService } from '../../../jobs/src/jobs/service.ts';
import { createJobSourceLister } from '../../../jobs/src/jobs/sources.ts';
import { createJobStore } from '../../../jobs/src/jobs/store.ts';
import { createWatchesService } from '../../../jobs/src/watches/service.ts';
import { createWatchStore } from '../../../jobs/src/watches/store.ts';
import { createWebhookSecrets } from '../../../jobs/src/webhooks/secrets.ts';
import { jobsApiOf, watchesApiOf, webhookSecretsApiOf } from '../../../jobs/src/api.ts';
import { createRetentionSettings } from '../../../jobs/src/retention/settings.ts';

export interface AccountsHarness {
  replicas: Replicas;
  /** The replicas' key-value store, which can list its keys. */
  kv: InMemoryKeyValueStore;
  audit: AuditLogModule;
  gw: TestGateway;
  /** The job service's parts in process, as the admin API takes them. */
  jobService: {
    jobs: JobsService;
    api: Pick<JobServiceApi, 'jobs' | 'watches' | 'webhookSecrets'>;
  };
  /** Runs the jobs (pollOnce, idle); stopped by `stop`. */
  runner: JobRunner;
  /** A new business account with 10,000 credits: its id and primary key. */
  newOwner(): Promise<{ id: string; key: string }>;
  stop(): Promise<void>;
}

/**
 * `replicas`: gateway replicas sharing the stores (default 1); the public app runs on the first.
 * `store`: the document store (default an in-memory one).
 */
export async function accountsGateway(
  options: { replicas?: number; store?: DocumentStore } = {},
): Promise<AccountsHarness> {
  const store = options.store ?? createInMemoryDocumentStore();
  const clock = new ManualClock(Date.UTC(2026, 2, 15, 10, 0, 0));
  const kv = createInMemoryKeyValueStore({ clock });
  const bus = createInProcessEventBus();
  const audit = createAuditLog({ store, bus, clock, logger: silentLogger });
  const replicas = await startReplicas(options.replicas ?? 1, { store, kv, bus, clock, audit });
  const m = replicas.modules[0]!;
  const config = loadJobServiceConfig({ JOB_WINDOW_SIZE: '3' }, { embedded: true });
  const backends = createFakeBackends();
  const jobStore = createJobStore(store);
  await jobStore.ensureIndexes();
  const notifier = createJobNotifier({
    store: jobStore,
    events: { publish: async () => {} },
    webhooks: { enqueue: async () => {} },
    logger: silentLogger,
  });
  const common = { webhooks: null, pricing: DEFAULT_PRICING, clock } as const;
  // Each account's data retention, read from its account document as the job service reads it.
  const retention = createRetentionSettings({ store, defaultResultsMs: config.JOB_RESULTS_TTL });
  const ttlsOf = async (accountId: string) => (await retention.of(accountId)).ttls;
  const jobs = createJobsService({
    ...common,
    store: jobStore,
    notifier,
    credits: m.credits,
    resultsTtlMs: config.JOB_RESULTS_TTL,
    ttlsOf,
  });
  const runner = createJobRunner({
    store: jobStore,
    fanOut: createDirectFanOut({ extractor: backends.extractor, concurrency: 2 }),
    lister: createJobSourceLister({ extractor: backends.extractor, timeoutMs: 5_000, sleep: async () => {} }),
    extractor: backends.extractor,
    credits: m.credits,
    pricing: DEFAULT_PRICING,
    notifier,
    clock,
    logger: silentLogger,
    config,
    instanceId: 'accounts-test',
    sleep: async () => {},
    ttlsOf,
  });
  const watchStore = createWatchStore(store);
  await watchStore.ensureIndexes();
  const watches = createWatchesService({
    ...common,
    store: watchStore,
    jobs,
    extractor: backends.extractor,
    accountOf: async () => null,
    events: { publish: async () => {} },
    logger: silentLogger,
    instanceId: 'accounts-test',
    config,
  });
  const secrets = createWebhookSecrets({ store, clock, pepper: 'an-accounts-test-pepper-of-32-chars!!' });
  const api = {
    jobs: jobsApiOf(jobs, { extractor: backends.extractor, lookupDeadlineMs: 5_000 }),
    watches: watchesApiOf(watches),
    webhookSecrets: webhookSecretsApiOf(secrets),
  };
  const gw = await buildTestGateway({
    deps: {
      access: m.access,
      credits: m.credits,
      idempotency: m.idempotency,
      clock,
      apiKeys: m.apiKeys,
      members: m.members,
      retention: m.retention,
      accountProfile: m.accountProfile,
      usage: m.usageReader,
      audit,
      backends,
      ...api,
    },
  });
  return {
    replicas,
    kv,
    audit,
    jobService: { jobs, api },
    gw,
    runner,
    async newOwner() {
      const made = await m.accounts.createAccount({ tier: 'business', credits: 10_000 });
      return { id: made.account._id, key: made.apiKey };
    },
    async stop() {
      await runner.stop(1_000);
      await gw.app.close();
      await replicas.stop();
    },
  };
}
