/**
 * The watches module's composition, for start-gateway.ts: the store, the lifecycle events, the
 * service behind the routes and the scheduler that runs due watches.
 */
import type { Clock, DocumentStore, EventBus } from '@subx/ports';
import type { PinoLogger } from '@subx/service-kit';
import type { AccessPricing } from '@subx/credits';
import type { Account } from '@subx/credits';
import type { ExtractorBackend } from '@subx/backends';
import type { JobServiceConfig as Config } from '../config.ts';
import type { JobsService } from '../jobs/service.ts';
import type { WebhookDeliveries } from '../webhooks/index.ts';
import { createBusWatchEvents } from './bus-events.ts';
import { createWatchScheduler } from './scheduler.ts';
import { createWatchesService } from './service.ts';
import type { WatchesService } from './service.ts';
import { createWatchStore } from './store.ts';

export interface RunningWatches {
  service: WatchesService;
  stop(): Promise<void>;
}

export async function startWatches(deps: {
  config: Config;
  store: DocumentStore;
  bus: EventBus;
  clock: Clock;
  logger: PinoLogger;
  instanceId: string;
  extractor: ExtractorBackend;
  jobs: JobsService;
  pricing: AccessPricing;
  accountOf(accountId: string): Promise<Account | null>;
  /** Counts a scheduled run against the account's daily request limit; false: the limit is reached. */
  countScheduledRun(account: Account): Promise<boolean>;
  webhooks: Pick<WebhookDeliveries, 'enqueue' | 'checkTarget'> | null;
  /** The account's `watch_history_days` when a watch is made (services/jobs/src/retention). */
  historyDaysOf?: (accountId: string) => Promise<number | null>;
}): Promise<RunningWatches> {
  const { config, bus, clock } = deps;
  const logger = deps.logger.child({ component: 'watches' });
  const store = createWatchStore(deps.store);
  await store.ensureIndexes();
  await bus.ensureTopics([config.WATCH_EVENTS_TOPIC]);
  const service = createWatchesService({
    store,
    jobs: deps.jobs,
    extractor: deps.extractor,
    accountOf: deps.accountOf,
    countScheduledRun: deps.countScheduledRun,
    events: createBusWatchEvents({ bus, topic: config.WATCH_EVENTS_TOPIC, clock }),
    webhooks: deps.webhooks,
    pricing: deps.pricing,
    clock,
    logger,
    instanceId: deps.instanceId,
    ...(deps.historyDaysOf ? { historyDaysOf: deps.historyDaysOf } : {}),
    config,
  });
  const scheduler = createWatchScheduler({ service, pollMs: config.WATCHES_POLL_MS, logger });
  scheduler.start();
  return {
    service,
    stop: () => scheduler.stop(Math.min(10_000, config.SHUTDOWN_TIMEOUT_MS)),
  };
}
