/**
 * Public surface of access control: accounts and keys, tiers, daily and per-IP rate limits,
 * credits with their outbox relay, idempotency, and the admin API plugin.
 */
import type { FastifyInstance } from 'fastify';
import { TOPICS } from '@subx/contracts';
import type { Clock, DocumentStore, EventBus, KeyValueStore } from '@subx/ports';
import { registerOutboxBacklog } from '@subx/service-kit';
import type { AccessControl, IdempotencyStore } from './types.ts';
import type { AccessConfig } from './config.ts';
import { DEFAULT_PRICING } from './pricing.ts';
import type { Logger } from './logger.ts';
import { createKeyCache } from './key-cache.ts';
import type { AccountRepository } from './accounts.ts';
import { createAccountRepository } from './accounts.ts';
import type { DailyRateLimiter, IpRateLimiter } from './rate-limit.ts';
import { createDailyRateLimiter, createIpRateLimiter } from './rate-limit.ts';
import { createAccessControl } from './access-control.ts';
import type { CreditLedgerImpl } from './credits.ts';
import { createCreditLedger, monthCreditsKey } from './credits.ts';
import type { OutboxRelay } from './outbox-relay.ts';
import { createOutboxRelay } from './outbox-relay.ts';
import { createIdempotencyStore } from './idempotency.ts';
import type { UsageReader } from './usage.ts';
import { createCounterUsageReader } from './usage.ts';
import { createDailyRequestLog, REQUEST_OUTBOX_COLLECTION, REQUEST_USAGE_TOPIC } from './daily-requests.ts';
import type { DailyRequestLog } from './daily-requests.ts';
import { adminRoutes } from '../routes/admin/index.ts';
import { selfServiceRoutes } from '../routes/admin/self-service.ts';
import { createDelegationRegistry } from './delegation.ts';
import { utcMonth } from './time.ts';

export * from './types.ts';
export * from './pricing.ts';
export * from './api-key.ts';
export * from './config.ts';
export type { Logger } from './logger.ts';
export { createKeyCache, KEY_INVALIDATION_CHANNEL } from './key-cache.ts';
export type { KeyCache } from './key-cache.ts';
export { createAccountRepository, isAccountId, ACCOUNTS_COLLECTION } from './accounts.ts';
export type { AccountRepository, AccountDoc } from './accounts.ts';
export {
  createDailyRateLimiter,
  createIpRateLimiter,
  rateLimitHeaders,
  rateLimitBody,
  rateLimitOf,
  secondsUntil,
} from './rate-limit.ts';
export type { DailyRateLimiter, IpRateLimiter } from './rate-limit.ts';
export { createAccessControl } from './access-control.ts';
export { createCreditLedger, OUTBOX_COLLECTION, CREDIT_USAGE_TOPIC } from './credits.ts';
export type { CreditLedgerImpl, ReservationDoc } from './credits.ts';
export { createOutboxRelay } from './outbox-relay.ts';
export type { OutboxRelay, OutboxEntry } from './outbox-relay.ts';
export { createIdempotencyStore, isValidIdempotencyKey, requestFingerprint } from './idempotency.ts';
export { createCounterUsageReader, createBillingUsageReader } from './usage.ts';
export {
  createDailyRequestLog,
  DAILY_REQUESTS_COLLECTION,
  REQUEST_OUTBOX_COLLECTION,
  REQUEST_USAGE_TOPIC,
} from './daily-requests.ts';
export type { DailyRequestLog, DailyRequestsDoc, RequestOutboxDoc } from './daily-requests.ts';
export type { UsageReader, AccountUsage, DayUsage } from './usage.ts';
export { guardKeyValueStore, isStoreUnavailable, storeUnavailable } from './store-guard.ts';
export { adminRoutes } from '../routes/admin/index.ts';
export type { AdminRoutesOptions } from '../routes/admin/index.ts';

export interface AccessModuleDeps {
  store: DocumentStore;
  kv: KeyValueStore;
  bus: EventBus;
  clock: Clock;
  config: Pick<AccessConfig, 'apiKeyPepper' | 'adminToken'> & Partial<AccessConfig>;
  logger: Logger;
  /**
   * What the admin usage report reads. Default: the gateway's own records (request counts from
   * `daily_requests`, credits from the KeyValueStore counters), for an access module without a
   * billing service; `startGateway` passes createBillingUsageReader(...).
   */
  usageReader?: UsageReader;
  /**
   * The durable record of counted requests; default: one on `store` that reports to billing on
   * `config.requestUsageTopic`. One passed in must report on that topic too (the relay here
   * publishes it).
   */
  requestLog?: DailyRequestLog;
}

export interface AccessModule {
  access: AccessControl;
  credits: CreditLedgerImpl;
  idempotency: IdempotencyStore;
  ipLimiter: IpRateLimiter;
  rateLimiter: DailyRateLimiter;
  accounts: AccountRepository;
  usageReader: UsageReader;
  outboxRelay: OutboxRelay;
  /** Publishes the request-usage reports of `requestLog` (billing.request-usage.v1). */
  requestRelay: OutboxRelay;
  requestLog: DailyRequestLog;
  /**
   * The admin API with its options bound, for the admin listener (admin-listener.ts):
   * `app.register(module.adminRoutes, { publicApp })` (no prefix). `publicApp` is the public API
   * that the playground's calls on behalf of an account run through.
   */
  adminRoutes: (fastify: FastifyInstance, options: { publicApp: FastifyInstance }) => Promise<void>;
  /** Creates indexes, subscribes to key invalidations, ensures the usage topic, starts the relay. */
  start(): Promise<void>;
  /** Stops the relay (after a last flush) and the invalidation subscription. */
  stop(): Promise<void>;
}

export function createAccessModule(deps: AccessModuleDeps): AccessModule {
  const { store, kv, bus, clock, logger } = deps;
  const pricing = deps.config.pricing ?? DEFAULT_PRICING;
  const topic = deps.config.creditUsageTopic ?? TOPICS.creditUsage.default;
  const requestTopic = deps.config.requestUsageTopic ?? REQUEST_USAGE_TOPIC;
  const keyCache = createKeyCache({
    kv,
    clock,
    logger,
    ...(deps.config.keyCacheTtlMs === undefined ? {} : { ttlMs: deps.config.keyCacheTtlMs }),
  });
  const accounts = createAccountRepository({
    store,
    clock,
    pepper: deps.config.apiKeyPepper,
    pricing,
    keyCache,
  });
  const requestLog =
    deps.requestLog ?? createDailyRequestLog({ store, clock, logger, requestUsageTopic: requestTopic });
  // Request-usage reports: one entry per account and day, rewritten by each flush; finished once sent.
  const requestRelay: OutboxRelay = createOutboxRelay({
    store,
    bus,
    topic: requestTopic,
    clock,
    logger,
    collection: REQUEST_OUTBOX_COLLECTION,
    intervalMs: deps.config.outboxIntervalMs ?? 1_000,
    finished: { kind: 'request_usage' },
  });
  const rateLimiter = createDailyRateLimiter({ kv, clock, pricing, requestLog });
  const delegations = createDelegationRegistry({ clock });
  const access = createAccessControl({ accounts, rateLimiter, clock, pricing, delegations });
  // The relay's recovery step and the ledger's commit hook refer to each other; both are only
  // called after construction.
  const relay: OutboxRelay = createOutboxRelay({
    store,
    bus,
    topic,
    clock,
    logger,
    intervalMs: deps.config.outboxIntervalMs ?? 1_000,
    beforeTick: () => credits.recover(),
  });
  const credits = createCreditLedger({
    store,
    kv,
    clock,
    logger,
    accounts,
    topic,
    ...(deps.config.reservationTtlMs === undefined ? {} : { reservationTtlMs: deps.config.reservationTtlMs }),
    onEventPending: () => relay.kick(),
  });
  const idempotency = createIdempotencyStore({ kv });
  const ipLimiter = createIpRateLimiter({
    kv,
    clock,
    limitPerMinute: deps.config.ipLimitPerMinute ?? 60,
    localFallback: true,
  });
  const usageReader = deps.usageReader ?? createCounterUsageReader({ kv, requests: requestLog });

  async function accountUsage(accountId: string) {
    const month = await kv.get(monthCreditsKey(accountId, utcMonth(clock.now())));
    return {
      today_requests: await rateLimiter.todayCount(accountId),
      month_credits: Number(month ?? 0) || 0,
    };
  }

  let unregisterBacklog = () => {};
  return {
    access,
    credits,
    idempotency,
    ipLimiter,
    rateLimiter,
    accounts,
    usageReader,
    outboxRelay: relay,
    requestRelay,
    requestLog,
    adminRoutes: async (fastify, { publicApp }) => {
      await adminRoutes(fastify, {
        accounts,
        adminToken: deps.config.adminToken,
        usageReader,
        accountUsage,
        clock,
        logger,
      });
      // Same plugin context: the bearer-token hook and error handler above cover these too.
      selfServiceRoutes(fastify, { accounts, rateLimiter, pricing, delegations, publicApp });
    },
    async start() {
      await accounts.init();
      await credits.init();
      await keyCache.start();
      await requestLog.init();
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
      await keyCache.stop();
    },
  };
}
