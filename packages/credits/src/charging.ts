/**
 * Everything a service that charges accounts runs, wired once: the credit ledger with the relay
 * that publishes its usage events (billing.credit-usage.v1) and recovers stranded holds before each
 * tick, and the daily request counter with the log and relay of its reports
 * (billing.request-usage.v1). The gateway charges calls with it, the job service bulk items and
 * scheduled watch runs; both write the same collections, so either one's relay publishes what
 * the other committed, and every step is safe on every replica.
 */
import { CLOUD_EVENT_KINDS, TOPICS } from '@subx/contracts';
import type { Clock, DocumentStore, EventBus, KeyValueStore, Logger } from '@subx/ports';
import { registerOutboxBacklog } from '@subx/service-kit';
import type { AccountBalances } from './balances.ts';
import { CREDIT_OUTBOX, createCreditLedger } from './credit-ledger.ts';
import type { CreditLedgerImpl } from './credit-ledger.ts';
import { createDailyRateLimiter } from './daily-limit.ts';
import type { DailyRateLimiter } from './daily-limit.ts';
import { createDailyRequestLog, REQUEST_OUTBOX, REQUEST_USAGE_TOPIC } from './daily-requests.ts';
import type { DailyRequestLog } from './daily-requests.ts';
import { createOutboxRelay } from './outbox-relay.ts';
import type { OutboxRelay } from './outbox-relay.ts';
import type { AccessPricing } from './pricing.ts';

export interface ChargingOptions {
  store: DocumentStore;
  kv: KeyValueStore;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  pricing: AccessPricing;
  accounts: Pick<AccountBalances, 'ensureMonthlyAllowance' | 'collection'>;
  creditUsageTopic?: string;
  requestUsageTopic?: string;
  /** CREDIT_RESERVATION_TTL_MS: holds open longer are released by recovery. */
  reservationTtlMs?: number;
  /** OUTBOX_INTERVAL_MS: how often the relays look for unpublished entries. */
  outboxIntervalMs?: number;
  /** The durable record of counted requests; default one on `store`. */
  requestLog?: DailyRequestLog;
}

export interface Charging {
  credits: CreditLedgerImpl;
  rateLimiter: DailyRateLimiter;
  requestLog: DailyRequestLog;
  outboxRelay: OutboxRelay;
  /** Publishes the request-usage reports of `requestLog`. */
  requestRelay: OutboxRelay;
  /** Creates the indexes, ensures the usage topics, starts the relays and the log's flushes. */
  start(): Promise<void>;
  /** Stops the relays after a last flush, and the log after its last reports. */
  stop(): Promise<void>;
}

export function createCharging(deps: ChargingOptions): Charging {
  const { store, kv, bus, clock, logger, pricing } = deps;
  const topic = deps.creditUsageTopic ?? TOPICS.creditUsage.default;
  const requestTopic = deps.requestUsageTopic ?? REQUEST_USAGE_TOPIC;
  const intervalMs = deps.outboxIntervalMs ?? 1_000;
  const requestLog =
    deps.requestLog ?? createDailyRequestLog({ store, clock, logger, requestUsageTopic: requestTopic });
  // Request-usage reports: one entry per account and day, rewritten by each flush; finished once sent.
  const requestRelay = createOutboxRelay({
    store,
    bus,
    topic: requestTopic,
    cloudEvent: CLOUD_EVENT_KINDS.requestUsage,
    clock,
    logger,
    outbox: REQUEST_OUTBOX,
    intervalMs,
  });
  const rateLimiter = createDailyRateLimiter({ kv, clock, pricing, requestLog });
  // Neither knows the other: the ledger says when an event is pending, the relay runs a step
  // before each tick. Wired here: a commit kicks the relay, each tick runs the ledger's recovery.
  let kickRelay = () => {};
  const credits = createCreditLedger({
    store,
    kv,
    clock,
    logger,
    accounts: deps.accounts,
    topic,
    ...(deps.reservationTtlMs === undefined ? {} : { reservationTtlMs: deps.reservationTtlMs }),
    onEventPending: () => kickRelay(),
  });
  const relay = createOutboxRelay({
    store,
    bus,
    topic,
    cloudEvent: CLOUD_EVENT_KINDS.creditUsage,
    clock,
    logger,
    outbox: CREDIT_OUTBOX,
    intervalMs,
    beforeTick: () => credits.recover(),
  });
  kickRelay = () => relay.kick();

  let unregisterBacklog = () => {};
  return {
    credits,
    rateLimiter,
    requestLog,
    outboxRelay: relay,
    requestRelay,
    async start() {
      await credits.init();
      await relay.init();
      await requestRelay.init();
      await bus.ensureTopics([topic, requestTopic]).catch((err: unknown) => {
        // The relays keep events pending until the bus accepts them.
        logger.warn({ err, topics: [topic, requestTopic] }, 'could not ensure the usage topics');
      });
      relay.start();
      // One backlog for both outboxes (credit-usage events, request-usage reports): what the
      // SubxOutboxBacklogOld alert watches is "usage not yet on the bus", whichever kind.
      unregisterBacklog = registerOutboxBacklog(async () => {
        const [charges, reports] = await Promise.all([relay.backlog(), requestRelay.backlog()]);
        return {
          pending: charges.pending + reports.pending,
          oldestAgeSeconds: Math.max(charges.oldestAgeSeconds, reports.oldestAgeSeconds),
        };
      });
      requestLog.start();
      requestRelay.start();
    },
    async stop() {
      unregisterBacklog();
      await relay.stop();
      await relay.flush();
      // The log's last flush writes the last reports; the relay then publishes them.
      await requestLog.stop();
      await requestRelay.stop();
      await requestRelay.flush();
    },
  };
}
