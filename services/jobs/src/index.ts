/**
 * @subx/jobs: the job service. Everything that runs after the request has been answered: bulk
 * jobs (store, source listing, the item runner on the bulk topic, results), watches (scheduler,
 * leases), webhook deliveries (secrets, outbox). The gateway forwards its routes here over gRPC
 * (subx.jobs.v1.JobsService); items are charged here, as they are delivered, through the same
 * ledger and outbox as every other charge (docs/decisions.md, "Who charges a job's items").
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { createGrpcExtractor } from '@subx/backends';
import type { ExtractorBackend, JobServiceApi } from '@subx/backends';
import {
  createAccountBalances,
  createCharging,
  createModelBudget,
  pricingFrom,
  refuseReservationsShorterThan,
} from '@subx/credits';
import type { Account, AccessPricing, Charging } from '@subx/credits';
import { createDirectFanOut } from '@subx/fanout';
import type { Clock, DocumentStore, EventBus, KeyValueStore } from '@subx/ports';
import { systemClock } from '@subx/ports';
import { grpcTlsFromConfig, startGrpcServer } from '@subx/service-kit';
import type { PinoLogger } from '@subx/service-kit';
import { createJobServiceApi } from './api.ts';
import { createAccountDataEraser } from './account-data.ts';
import type { JobServiceConfig } from './config.ts';
import { jobsServiceRegistration } from './grpc/jobs.handlers.ts';
import { startJobs } from './jobs/start-jobs.ts';
import type { RunningJobs } from './jobs/start-jobs.ts';
import { jobBacklogGauge } from './jobs/backlog.ts';
import { startWatches } from './watches/start-watches.ts';
import type { RunningWatches } from './watches/start-watches.ts';
import { createWebhookModule } from './webhooks/index.ts';
import { createJobStore } from './jobs/store.ts';
import { createWatchStore } from './watches/store.ts';
import { createRetentionSettings } from './retention/settings.ts';
import { createRetentionSweep } from './retention/sweep.ts';
import type { RetentionSweep } from './retention/sweep.ts';
import type { WebhookModule } from './webhooks/index.ts';

export { ConfigSchema, configSchema, loadJobServiceConfig, redactConfig } from './config.ts';
export type { JobServiceConfig } from './config.ts';
export { createJobServiceApi, jobsApiOf, watchesApiOf, webhookSecretsApiOf } from './api.ts';
export { jobsServiceRegistration } from './grpc/jobs.handlers.ts';

export interface StartJobServiceOptions {
  config: JobServiceConfig;
  store: DocumentStore;
  kv: KeyValueStore;
  bus: EventBus;
  logger: PinoLogger;
  clock?: Clock;
  /**
   * How bulk items reach the extractor: 'bus' publishes one job per video on the bulk topic for
   * the extractor's bulk workers; 'direct' calls the extractor over gRPC (no bus shared with
   * workers). Default 'bus'.
   */
  fanOut?: 'bus' | 'direct';
  /** The extractor; default a gRPC client at EXTRACTOR_GRPC_ADDR. */
  extractor?: ExtractorBackend;
  /** gRPC bind address; default GRPC_HOST. */
  host?: string;
  /** Unique per process: the lease owner of the jobs and watches it runs. */
  instanceId?: string;
  /** API_KEY_PEPPER when the configuration has none (`npm start` shares the gateway's). */
  pepper?: string;
}

export interface RunningJobService {
  /** The gRPC port it listens on. */
  port: number;
  /** What the gRPC server serves, in this process. */
  api: JobServiceApi;
  jobs: RunningJobs;
  watches: RunningWatches;
  webhooks: WebhookModule;
  charging: Charging;
  /** Applies the accounts' data retention and deletes what it has expired (src/retention). */
  retention: RetentionSweep;
  /** Stops taking calls, lets the runner's items in flight finish (bounded), releases the rest. */
  stop(): Promise<void>;
}

export async function startJobService(options: StartJobServiceOptions): Promise<RunningJobService> {
  const { config, store, kv, bus } = options;
  const clock = options.clock ?? systemClock;
  const logger = options.logger;
  const pepper = config.API_KEY_PEPPER ?? options.pepper;
  if (!pepper) throw new Error('API_KEY_PEPPER is required: webhook secrets are sealed under it');
  // A round's hold must end well before recovery (in whichever service runs it) takes it back.
  refuseReservationsShorterThan(config.CREDIT_RESERVATION_TTL_MS, {
    JOB_ROUND_TIMEOUT_MS: config.JOB_ROUND_TIMEOUT_MS,
  });
  const pricing: AccessPricing = pricingFrom(config.ACCESS_PRICING_JSON);
  // Read once (its files too): the extractor's client and this service's listener use it.
  const tls = grpcTlsFromConfig(config);
  const instanceId = options.instanceId ?? `${hostname()}-jobs-${randomUUID().slice(0, 8)}`;

  let ownExtractor: ReturnType<typeof createGrpcExtractor> | undefined;
  let extractor = options.extractor;
  if (!extractor) {
    ownExtractor = createGrpcExtractor({
      address: config.EXTRACTOR_GRPC_ADDR,
      deadlineMs: config.GRPC_DEADLINE_MS,
      credentials: tls.client.credentials,
      channelOptions: tls.client.channelOptions,
      logger,
    });
    extractor = ownExtractor.extractor;
  }

  const balances = createAccountBalances({ store, clock, pricing });
  const charging = createCharging({
    store,
    kv,
    bus,
    clock,
    logger: logger.child({ component: 'charging' }),
    pricing,
    accounts: balances,
    creditUsageTopic: config.CREDIT_USAGE_TOPIC,
    requestUsageTopic: config.REQUEST_USAGE_TOPIC,
    reservationTtlMs: config.CREDIT_RESERVATION_TTL_MS,
  });
  await charging.start();

  const webhooks = createWebhookModule({
    store,
    clock,
    logger: logger.child({ component: 'webhooks' }),
    config,
    pepper,
    ...(config.API_KEY_PEPPER_PREVIOUS ? { previousPepper: config.API_KEY_PEPPER_PREVIOUS } : {}),
  });
  await webhooks.start();

  // Each account's data retention, read from its account document (the gateway writes it).
  const retentionSettings = createRetentionSettings({ store, defaultResultsMs: config.JOB_RESULTS_TTL });
  const directFanOut = createDirectFanOut({ extractor, concurrency: config.FANOUT_CONCURRENCY });
  const jobs = await startJobs({
    config,
    store,
    bus,
    clock,
    logger,
    instanceId,
    fanOutMode: options.fanOut ?? 'bus',
    directFanOut,
    extractor,
    credits: charging.credits,
    pricing,
    webhooks,
    modelBudget: {
      budget: createModelBudget({ kv, clock, pricing }),
      tierOf: (accountId) => balances.tierOf(accountId),
    },
    ttlsOf: async (accountId) => (await retentionSettings.of(accountId)).ttls,
  });
  const watches = await startWatches({
    config,
    store,
    bus,
    clock,
    logger,
    instanceId,
    extractor,
    jobs: jobs.service,
    pricing,
    accountOf: async (accountId): Promise<Account | null> => {
      const tier = await balances.tierOf(accountId);
      return tier ? { id: accountId, tier } : null;
    },
    // A scheduled run lists the platform as POST …/run does, and counts as that request does.
    countScheduledRun: async (account) => (await charging.rateLimiter.consume(account, 'jobs')).admitted,
    webhooks,
    historyDaysOf: async (accountId) => (await retentionSettings.of(accountId)).historyDays,
  });
  const retention = createRetentionSweep({
    store,
    jobs: createJobStore(store),
    watches: createWatchStore(store),
    settings: retentionSettings,
    clock,
    logger: logger.child({ component: 'retention' }),
  });
  retention.start();
  const unregisterBacklog = jobBacklogGauge(store);

  const api = createJobServiceApi({
    jobs: jobs.service,
    watches: watches.service,
    secrets: webhooks.secrets,
    eraseAccountData: createAccountDataEraser({ store, jobs: jobs.service, clock }),
    extractor,
    lookupDeadlineMs: config.GRPC_DEADLINE_MS,
  });
  let server: Awaited<ReturnType<typeof startGrpcServer>>;
  try {
    server = await startGrpcServer({
      port: config.GRPC_PORT,
      host: options.host ?? config.GRPC_HOST,
      credentials: tls.serverCredentials,
      services: [jobsServiceRegistration(api)],
      logger,
    });
  } catch (error) {
    unregisterBacklog();
    await retention.stop().catch(() => {});
    await watches.stop().catch(() => {});
    await jobs.stop().catch(() => {});
    await webhooks.stop().catch(() => {});
    await charging.stop().catch(() => {});
    ownExtractor?.close();
    throw error;
  }
  logger.info({ port: server.port, instance: instanceId }, 'job service started');
  return {
    port: server.port,
    api,
    jobs,
    watches,
    webhooks,
    charging,
    retention,
    async stop() {
      // No new calls; the watches' runs and the jobs' items in flight finish (bounded), their
      // leases go back for another replica; then the deliveries and the relays' last flush.
      await server.shutdown(Math.min(10_000, config.SHUTDOWN_TIMEOUT_MS));
      unregisterBacklog();
      await retention.stop(Math.min(10_000, config.SHUTDOWN_TIMEOUT_MS));
      await watches.stop();
      await jobs.stop();
      await webhooks.stop();
      await charging.stop();
      ownExtractor?.close();
    },
  };
}
