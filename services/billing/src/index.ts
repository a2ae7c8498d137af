/**
 * @subx/billing: consumes billing.credit-usage.v1 into an append-only ledger with per-day
 * aggregates and billing.request-usage.v1 into per-day request counts, and serves both over gRPC
 * (subx.billing.v1.BillingService).
 */
import type { Clock, DocumentStore, EventBus, Subscription } from '@subx/ports';
import { systemClock } from '@subx/ports';
import { startGrpcServer, grpcTlsFromConfig } from '@subx/service-kit';
import type { PinoLogger } from '@subx/service-kit';
import type { BillingConfig } from './config.ts';
import { billingServiceRegistration } from './grpc/billing.handlers.ts';
import {
  startAccountDeletionConsumer,
  startRequestUsageConsumer,
  startUsageConsumer,
} from './ledger/usage-consumer.ts';
import { createAccountPseudonyms } from './ledger/pseudonyms.ts';
import type { AccountPseudonyms } from './ledger/pseudonyms.ts';
import { createUsageLedger } from './ledger/usage-ledger.ts';
import { createRequestCounts } from './ledger/request-counts.ts';
import type { RequestCounts } from './ledger/request-counts.ts';
import { createUsageReports } from './ledger/usage-report.ts';
import { startMeteringExport } from './metering/export.ts';
import type { UsageReports } from './ledger/usage-report.ts';
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
export {
  startUsageConsumer,
  startRequestUsageConsumer,
  CREDIT_USAGE_TOPIC,
  BILLING_GROUP_ID,
  REQUEST_USAGE_TOPIC,
  REQUEST_USAGE_GROUP_ID,
  startAccountDeletionConsumer,
} from './ledger/usage-consumer.ts';
export { createAccountPseudonyms, DELETED_ACCOUNTS_COLLECTION } from './ledger/pseudonyms.ts';
export type { AccountPseudonyms, PseudonymisedAccount } from './ledger/pseudonyms.ts';
export {
  createRequestCounts,
  validateRequestUsageEvent,
  REQUEST_COUNTS_COLLECTION,
} from './ledger/request-counts.ts';
export type { RequestCounts, RequestDaily, SourceTally, ApplyOutcome } from './ledger/request-counts.ts';
export { createUsageReports } from './ledger/usage-report.ts';
export { meteringEventOf, startMeteringExport } from './metering/export.ts';
export type { MeteringEvent, MeteringExportOptions } from './metering/export.ts';
export type { UsageReports } from './ledger/usage-report.ts';
export { ConfigSchema, loadBillingConfig } from './config.ts';
export type { BillingConfig } from './config.ts';

export interface StartBillingServiceOptions {
  readonly config: BillingConfig;
  readonly store: DocumentStore;
  readonly bus: EventBus;
  readonly logger: PinoLogger;
  readonly clock?: Clock;
  readonly host?: string;
  readonly ledger?: UsageLedgerOptions;
}

export interface RunningBillingService {
  readonly port: number;
  /** The ledger the service writes (reconciliation checks, admin tooling). */
  readonly ledger: UsageLedger;
  /** Requests per account and day (billing.request-usage.v1). */
  readonly requests: RequestCounts;
  /** What GetUsage answers: requests from `requests`, credits from `ledger`. */
  readonly reports: UsageReports;
  /** Deleted workspaces' pseudonyms (accounts.v1). */
  readonly pseudonyms: AccountPseudonyms;
  stop(timeoutMs?: number): Promise<void>;
}

export async function startBillingService(
  options: StartBillingServiceOptions,
): Promise<RunningBillingService> {
  const { config, logger } = options;
  const clock = options.clock ?? systemClock;
  const pseudonyms = await createAccountPseudonyms(options.store, clock);
  const accountOf = (accountId: string) => pseudonyms.accountOf(accountId);
  const ledger = await createUsageLedger(options.store, clock, { ...options.ledger, accountOf });
  const requests = await createRequestCounts(options.store, clock, accountOf);
  const reports = createUsageReports(ledger, requests);
  const consumer: Subscription = await startUsageConsumer({
    bus: options.bus,
    ledger,
    logger: logger.child({ component: 'usage-consumer' }),
    groupId: config.KAFKA_GROUP_ID,
    topic: config.CREDIT_USAGE_TOPIC,
  });
  const requestConsumer: Subscription = await startRequestUsageConsumer({
    bus: options.bus,
    requests,
    groupId: config.KAFKA_REQUESTS_GROUP_ID ?? `${config.KAFKA_GROUP_ID}-requests`,
    topic: config.REQUEST_USAGE_TOPIC,
  });
  const deletionConsumer: Subscription = await startAccountDeletionConsumer({
    bus: options.bus,
    pseudonyms,
    logger: logger.child({ component: 'account-deletions' }),
    topic: config.ACCOUNT_EVENTS_TOPIC,
    groupId: config.KAFKA_ACCOUNT_DELETIONS_GROUP_ID,
  });
  // The link from a deleted workspace to its pseudonym lasts its grace period, then goes.
  const sweeper = setInterval(() => {
    pseudonyms.sweep().catch((err: unknown) => logger.warn({ err }, 'pseudonym sweep failed'));
  }, 60_000);
  sweeper.unref();
  const metering: Subscription | undefined = config.METERING_INGEST_URL
    ? await startMeteringExport({
        bus: options.bus,
        url: config.METERING_INGEST_URL,
        ...(config.METERING_INGEST_TOKEN ? { token: config.METERING_INGEST_TOKEN } : {}),
        topic: config.CREDIT_USAGE_TOPIC,
        groupId: config.METERING_GROUP_ID,
        logger: logger.child({ component: 'metering-export' }),
      })
    : undefined;
  const server = await startGrpcServer({
    port: config.GRPC_PORT,
    host: options.host ?? config.GRPC_HOST,
    credentials: grpcTlsFromConfig(config).serverCredentials,
    services: [billingServiceRegistration(reports)],
    logger,
  });
  logger.info({ port: server.port }, 'billing service started');
  return {
    port: server.port,
    ledger,
    requests,
    reports,
    pseudonyms,
    async stop(timeoutMs = config.SHUTDOWN_TIMEOUT_MS) {
      clearInterval(sweeper);
      // Stop consuming first (the in-flight event finishes and commits), then the read side.
      await Promise.all([consumer.stop(), requestConsumer.stop(), deletionConsumer.stop(), metering?.stop()]);
      await server.shutdown(timeoutMs);
    },
  };
}
