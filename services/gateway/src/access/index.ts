/**
 * Public surface of access control: accounts and keys, tiers, daily and per-IP rate limits,
 * credits with their outbox relays, idempotency. The admin API that manages it lives in
 * `src/admin/`, on the admin listener (`src/admin/listener.ts`), not here.
 */
import { CLOUD_EVENT_KINDS, TOPICS } from '@subx/contracts';
import type { Clock, DocumentStore, EventBus, KeyValueStore } from '@subx/ports';
import { registerOutboxBacklog } from '@subx/service-kit';
import type { AccessControl, AccountStanding, IdempotencyStore } from './types.ts';
import type { Account } from '@subx/credits';
import type { AccessConfig } from './config.ts';
import type { AccessPricing } from '@subx/credits';
import { DEFAULT_PRICING } from '@subx/credits';
import type { Logger } from '@subx/ports';
import { createKeyCache } from './key-cache.ts';
import type { AccountRepository } from './accounts.ts';
import { createAccountRepository } from './accounts.ts';
import type { AccountReadLimiter, DailyRateLimiter, IpRateLimiter } from './rate-limit.ts';
import { createAccountReadLimiter, createDailyRateLimiter, createIpRateLimiter } from './rate-limit.ts';
import { createAccessControl } from './access-control.ts';
import type { CreditLedgerImpl } from '@subx/credits';
import { CREDIT_OUTBOX, createCreditLedger } from '@subx/credits';
import type { OutboxRelay } from './outbox-relay.ts';
import { createOutboxRelay } from './outbox-relay.ts';
import { createIdempotencyStore } from './idempotency.ts';
import type { UsageReader } from './usage.ts';
import { createCounterUsageReader } from './usage.ts';
import { createDailyRequestLog, REQUEST_OUTBOX, REQUEST_USAGE_TOPIC } from './daily-requests.ts';
import type { DailyRequestLog } from './daily-requests.ts';
import type { DelegationRegistry } from './delegation.ts';
import { createDelegationRegistry } from './delegation.ts';
import { monthCreditsKey } from '@subx/credits';
import { utcMonth } from '@subx/credits';

export { METERED_OPERATIONS } from '@subx/credits';
export type { Operation } from '@subx/credits';
export { loadAccessConfig, refuseReservationsShorterThanRequests } from './config.ts';
export { createBillingUsageReader } from './usage.ts';
export { DAILY_REQUESTS_COLLECTION } from './daily-requests.ts';
export { guardKeyValueStore } from './store-guard.ts';

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
  /** The free reads' per-account limit (jobs, results, the webhook secret, MCP's handshake). */
  readLimiter: AccountReadLimiter;
  rateLimiter: DailyRateLimiter;
  accounts: AccountRepository;
  usageReader: UsageReader;
  outboxRelay: OutboxRelay;
  /** Publishes the request-usage reports of `requestLog` (billing.request-usage.v1). */
  requestRelay: OutboxRelay;
  requestLog: DailyRequestLog;
  /** The price and limit table in force. */
  pricing: AccessPricing;
  /** Single-use tokens of calls made on behalf of an account (the dashboard's playground). */
  delegations: DelegationRegistry;
  /** The bearer token of the admin API. */
  adminToken: string;
  /** The admin token being rotated out (ADMIN_TOKEN_PREVIOUS), accepted too while set. */
  adminTokenPrevious?: string;
  /** Today's counted requests and this month's charged credits of an account (admin GET). */
  accountUsage(accountId: string): Promise<{ today_requests: number; month_credits: number }>;
  /** GET /api/v1/account: the balance (after this month's allowance) and today's requests. */
  accountStanding(account: Account): Promise<AccountStanding>;
  /** The clock and logger the module runs on (the admin API uses the same). */
  clock: Clock;
  logger: Logger;
  /** Creates indexes, subscribes to key invalidations, ensures the usage topics, starts the relays. */
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
    ...(deps.config.apiKeyPepperPrevious ? { previousPepper: deps.config.apiKeyPepperPrevious } : {}),
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
    cloudEvent: CLOUD_EVENT_KINDS.requestUsage,
    clock,
    logger,
    outbox: REQUEST_OUTBOX,
    intervalMs: deps.config.outboxIntervalMs ?? 1_000,
  });
  const rateLimiter = createDailyRateLimiter({ kv, clock, pricing, requestLog });
  const delegations = createDelegationRegistry({ clock });
  const access = createAccessControl({ accounts, rateLimiter, clock, pricing, delegations });
  // Neither knows the other: the ledger says when an event is pending, the relay runs a step
  // before each tick. Wired here: a commit kicks the relay, each tick runs the ledger's recovery.
  let kickRelay = () => {};
  const credits = createCreditLedger({
    store,
    kv,
    clock,
    logger,
    accounts,
    topic,
    ...(deps.config.reservationTtlMs === undefined ? {} : { reservationTtlMs: deps.config.reservationTtlMs }),
    onEventPending: () => kickRelay(),
  });
  const relay: OutboxRelay = createOutboxRelay({
    store,
    bus,
    topic,
    cloudEvent: CLOUD_EVENT_KINDS.creditUsage,
    clock,
    logger,
    outbox: CREDIT_OUTBOX,
    intervalMs: deps.config.outboxIntervalMs ?? 1_000,
    beforeTick: () => credits.recover(),
  });
  kickRelay = () => relay.kick();
  const idempotency = createIdempotencyStore({ kv });
  const ipLimiter = createIpRateLimiter({
    kv,
    clock,
    limitPerMinute: deps.config.ipLimitPerMinute ?? 60,
    localFallback: true,
  });
  const readLimiter = createAccountReadLimiter({
    kv,
    clock,
    limitPerMinute: deps.config.accountReadLimitPerMinute ?? 300,
  });
  const usageReader = deps.usageReader ?? createCounterUsageReader({ kv, requests: requestLog });

  async function accountUsage(accountId: string) {
    const month = await kv.get(monthCreditsKey(accountId, utcMonth(clock.now())));
    return {
      today_requests: await rateLimiter.todayCount(accountId),
      month_credits: Number(month ?? 0) || 0,
    };
  }

  /** GET /api/v1/account: the balance (after this month's allowance) and today's requests. */
  async function accountStanding(account: Account): Promise<AccountStanding> {
    const [doc, daily, dailyUsed] = await Promise.all([
      accounts.get(account.id),
      rateLimiter.peek(account),
      rateLimiter.todayCount(account.id),
    ]);
    return { creditsBalance: doc?.credits ?? 0, dailyUsed, daily };
  }

  let unregisterBacklog = () => {};
  return {
    access,
    credits,
    idempotency,
    ipLimiter,
    readLimiter,
    rateLimiter,
    accounts,
    usageReader,
    outboxRelay: relay,
    requestRelay,
    requestLog,
    pricing,
    delegations,
    adminToken: deps.config.adminToken,
    ...(deps.config.adminTokenPrevious ? { adminTokenPrevious: deps.config.adminTokenPrevious } : {}),
    accountUsage,
    accountStanding,
    clock,
    logger,
    async start() {
      await accounts.init();
      await credits.init();
      await relay.init();
      await requestRelay.init();
      await keyCache.start();
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
