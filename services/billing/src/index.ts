/**
 * @subx/billing: consumes billing.credit-usage.v1 into an append-only ledger with per-day
 * aggregates, and serves them over gRPC (subx.billing.v1.BillingService).
 */
import type { Clock, DocumentStore, EventBus, Subscription } from '@subx/ports';
import { systemClock } from '@subx/ports';
import { startGrpcServer } from '@subx/service-kit';
import type { Logger } from '@subx/service-kit';
import type { BillingConfig } from './config.ts';
import { billingServiceRegistration } from './grpc/billing.handlers.ts';
import { startUsageConsumer } from './ledger/usage-consumer.ts';
import { createUsageLedger } from './ledger/usage-ledger.ts';
import type { UsageLedger, UsageLedgerOptions } from './ledger/usage-ledger.ts';

export { createUsageLedger, validateUsageEvent, InvalidUsageEventError } from './ledger/usage-ledger.ts';
export type {
  UsageLedger,
  UsageLedgerOptions,
  UsageReport,
  DayUsage,
  LedgerEntry,
  DailyAggregate,
} from './ledger/usage-ledger.ts';
export { startUsageConsumer, CREDIT_USAGE_TOPIC, BILLING_GROUP_ID } from './ledger/usage-consumer.ts';
export { ConfigSchema, loadBillingConfig } from './config.ts';
export type { BillingConfig } from './config.ts';

export interface StartBillingServiceOptions {
  readonly config: BillingConfig;
  readonly store: DocumentStore;
  readonly bus: EventBus;
  readonly logger: Logger;
  readonly clock?: Clock;
  readonly host?: string;
  readonly ledger?: UsageLedgerOptions;
}

export interface RunningBillingService {
  readonly port: number;
  /** The ledger the service writes (reconciliation checks, admin tooling). */
  readonly ledger: UsageLedger;
  stop(timeoutMs?: number): Promise<void>;
}

export async function startBillingService(
  options: StartBillingServiceOptions,
): Promise<RunningBillingService> {
  const { config, logger } = options;
  const ledger = await createUsageLedger(options.store, options.clock ?? systemClock, options.ledger);
  const consumer: Subscription = await startUsageConsumer({
    bus: options.bus,
    ledger,
    logger: logger.child({ component: 'usage-consumer' }),
    groupId: config.KAFKA_GROUP_ID,
    topic: config.CREDIT_USAGE_TOPIC,
  });
  const server = await startGrpcServer({
    port: config.GRPC_PORT,
    host: options.host ?? config.GRPC_HOST,
    services: [billingServiceRegistration(ledger)],
    logger,
  });
  logger.info({ port: server.port }, 'billing service started');
  return {
    port: server.port,
    ledger,
    async stop(timeoutMs = config.SHUTDOWN_TIMEOUT_MS) {
      // Stop consuming first (the in-flight event finishes and commits), then the read side.
      await consumer.stop();
      await server.shutdown(timeoutMs);
    },
  };
}
