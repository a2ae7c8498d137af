/**
 * The jobs module's composition, for start-gateway.ts: the store, the bulk fan-out (a topic and
 * workers of its own, so one account's 10,000 videos never queue ahead of anyone's batch call),
 * the lister, the notifier, the runner and the service behind the routes.
 */
import type { Clock, DocumentStore, EventBus } from '@subx/ports';
import type { PinoLogger } from '@subx/service-kit';
import type { AccessPricing } from '@subx/credits';
import type { ModelBudget } from '@subx/credits';
import type { Tier } from '@subx/credits';
import type { CreditLedger } from '@subx/credits';
import type { ExtractorBackend } from '@subx/backends';
import type { JobServiceConfig as Config } from '../config.ts';
import { createKafkaFanOut } from '@subx/fanout';
import type { FanOut } from '@subx/fanout';
import { createBusJobEvents } from './bus-events.ts';
import { createJobNotifier } from './notify.ts';
import type { JobWebhookSink } from './notify.ts';
import { createJobRunner } from './runner.ts';
import type { JobRunner } from './runner.ts';
import { createJobsService } from './service.ts';
import type { JobWebhooks, JobsService } from './service.ts';
import { createJobSourceLister } from './sources.ts';
import { createJobStore } from './store.ts';
import type { JobTtlsOf } from './ttls.ts';

export interface RunningJobs {
  service: JobsService;
  runner: JobRunner;
  stop(): Promise<void>;
}

export async function startJobs(deps: {
  config: Config;
  store: DocumentStore;
  bus: EventBus;
  clock: Clock;
  logger: PinoLogger;
  instanceId: string;
  fanOutMode: 'bus' | 'direct';
  directFanOut: FanOut;
  extractor: ExtractorBackend;
  credits: CreditLedger;
  pricing: AccessPricing;
  webhooks: (JobWebhooks & JobWebhookSink) | null;
  /** The accounts' daily model budget (@subx/credits, model-budget.ts) and each account's tier for it. */
  modelBudget?: { budget: ModelBudget; tierOf(accountId: string): Promise<Tier | null> };
  /** The account's retention when a job ends (services/jobs/src/retention); absent: JOB_RESULTS_TTL. */
  ttlsOf?: JobTtlsOf;
}): Promise<RunningJobs> {
  const { config, bus, clock } = deps;
  // Children of the gateway's logger, one `component` each (a child of a child would repeat it).
  const logger = deps.logger.child({ component: 'jobs' });
  const store = createJobStore(deps.store);
  await store.ensureIndexes();
  await bus.ensureTopics([config.JOB_EVENTS_TOPIC]);
  let fanOut: FanOut & { stop?(): Promise<void> } = deps.directFanOut;
  if (deps.fanOutMode === 'bus') {
    const bulk = createKafkaFanOut({
      bus,
      instanceId: `${deps.instanceId}-jobs`,
      clock,
      logger: deps.logger.child({ component: 'bulk-fan-out' }),
      jobsTopic: config.EXTRACT_BULK_JOBS_TOPIC,
      resultsTopic: config.EXTRACT_RESULTS_TOPIC,
      workersGroupId: config.EXTRACT_BULK_WORKERS_GROUP,
      workersReachable: () =>
        deps.extractor.checkHealth(Math.min(1_000, config.HEALTH_CHECK_TIMEOUT_MS)).catch(() => false),
      busTimeoutMs: config.FANOUT_BUS_TIMEOUT_MS,
      // No fallback to direct gRPC: with no bulk worker up, a job waits (it is not in a hurry),
      // rather than pressing on the extractor that batch calls share.
    });
    await bulk.start();
    fanOut = bulk;
  }
  const notifier = createJobNotifier({
    store,
    events: createBusJobEvents({ bus, topic: config.JOB_EVENTS_TOPIC, clock }),
    webhooks: deps.webhooks,
    logger,
  });
  const runner = createJobRunner({
    store,
    fanOut,
    lister: createJobSourceLister({ extractor: deps.extractor, timeoutMs: config.JOB_LISTING_TIMEOUT_MS }),
    extractor: deps.extractor,
    credits: deps.credits,
    pricing: deps.pricing,
    notifier,
    clock,
    logger,
    config,
    instanceId: deps.instanceId,
    ...(deps.modelBudget ? { modelBudget: deps.modelBudget } : {}),
    ...(deps.ttlsOf ? { ttlsOf: deps.ttlsOf } : {}),
    // Straight to the extractor's gRPC port there is no queue to wait in: a job keeps no more
    // items in flight than a batch request would.
    ...(deps.fanOutMode === 'direct'
      ? { maxInFlight: Math.min(config.JOB_WINDOW_SIZE, config.FANOUT_CONCURRENCY) }
      : {}),
  });
  runner.start();
  const service = createJobsService({
    store,
    notifier,
    webhooks: deps.webhooks,
    credits: deps.credits,
    pricing: deps.pricing,
    clock,
    resultsTtlMs: config.JOB_RESULTS_TTL,
    ...(deps.ttlsOf ? { ttlsOf: deps.ttlsOf } : {}),
  });
  return {
    service,
    runner,
    async stop() {
      await runner.stop(Math.min(10_000, config.SHUTDOWN_TIMEOUT_MS));
      if (fanOut !== deps.directFanOut) await fanOut.stop?.();
    },
  };
}
