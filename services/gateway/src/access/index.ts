/**
 * Public surface of access control: accounts and keys, tiers, daily and per-IP rate limits,
 * credits with their outbox relays, idempotency. The admin API that manages it lives in
 * `src/admin/`, on the admin listener (`src/admin/listener.ts`), not here.
 */
import { TOPICS } from '@subx/contracts';
import type { Clock, DocumentStore, EventBus, KeyValueStore } from '@subx/ports';
import type { AccessControl, AccountProfile, AccountStanding, IdempotencyStore } from './types.ts';
import type { Account } from '@subx/credits';
import type { AccessConfig } from './config.ts';
import type { AccessPricing } from '@subx/credits';
import { DEFAULT_PRICING } from '@subx/credits';
import type { Logger } from '@subx/ports';
import { createKeyCache } from './key-cache.ts';
import type { AccountRepository } from './accounts.ts';
import { createAccountRepository } from './accounts.ts';
import type { AccountReadLimiter, IpRateLimiter } from './rate-limit.ts';
import type { DailyRateLimiter } from '@subx/credits';
import { createAccountReadLimiter, createIpRateLimiter } from './rate-limit.ts';
import { createAccessControl } from './access-control.ts';
import { createNamedKeys, type NamedKeys } from './named-keys.ts';
import { createApiKeys, type ApiKeys } from './api-keys.ts';
import { createWorkspaceMembers, type WorkspaceMembers } from './workspace-members.ts';
import { createAccountRetention, type AccountRetention } from './retention.ts';
import { createKeyUseObserver } from './key-use.ts';
import type { AuditLog } from '../domain/audit-log.ts';
import type { CreditLedgerImpl } from '@subx/credits';
import { createCharging } from '@subx/credits';
import type { OutboxRelay } from '@subx/credits';
import { createIdempotencyStore } from './idempotency.ts';
import type { UsageReader } from './usage.ts';
import { createCounterUsageReader } from './usage.ts';
import { REQUEST_USAGE_TOPIC } from '@subx/credits';
import type { DailyRequestLog } from '@subx/credits';
import type { DelegationRegistry } from './delegation.ts';
import { createDelegationRegistry } from './delegation.ts';
import { monthCreditsKey } from '@subx/credits';
import { utcMonth } from '@subx/credits';

export { METERED_OPERATIONS } from '@subx/credits';
export type { Operation } from '@subx/credits';
export { loadAccessConfig } from './config.ts';
export { createBillingUsageReader } from './usage.ts';
export { DAILY_REQUESTS_COLLECTION } from '@subx/credits';
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
  /** Where refused calls of a named key are recorded (scope or source network). */
  audit?: AuditLog;
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
  /** Each account's named keys, with their scopes (beside the primary key on `accounts`). */
  namedKeys: NamedKeys;
  /** The keys as `/api/v1/keys` and the admin API manage them (audited). */
  apiKeys: ApiKeys;
  /** Who belongs to each workspace (account), with which role (the dashboard's people). */
  members: WorkspaceMembers;
  /** The workspace's data retention as `/api/v1/account/retention` and the admin API change it (audited). */
  retention: AccountRetention;
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
  /** The account's own record for its export; null for an unknown account. */
  accountProfile(accountId: string): Promise<AccountProfile | null>;
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
  const namedKeys = createNamedKeys({ store, clock, pepper: deps.config.apiKeyPepper });
  const accounts = createAccountRepository({
    store,
    clock,
    namedKeys,
    pepper: deps.config.apiKeyPepper,
    ...(deps.config.apiKeyPepperPrevious ? { previousPepper: deps.config.apiKeyPepperPrevious } : {}),
    pricing,
    keyCache,
  });
  const charging = createCharging({
    store,
    kv,
    bus,
    clock,
    logger,
    pricing,
    accounts,
    creditUsageTopic: topic,
    requestUsageTopic: requestTopic,
    ...(deps.config.reservationTtlMs === undefined ? {} : { reservationTtlMs: deps.config.reservationTtlMs }),
    ...(deps.config.outboxIntervalMs === undefined ? {} : { outboxIntervalMs: deps.config.outboxIntervalMs }),
    ...(deps.requestLog ? { requestLog: deps.requestLog } : {}),
  });
  const { credits, rateLimiter, requestLog, outboxRelay: relay, requestRelay } = charging;
  const delegations = createDelegationRegistry({ clock });
  const keyUse = createKeyUseObserver({
    clock,
    logger,
    accounts,
    namedKeys,
    ...(deps.audit ? { audit: deps.audit } : {}),
  });
  const access = createAccessControl({ accounts, rateLimiter, clock, pricing, delegations, keyUse });
  const apiKeys = createApiKeys({
    accounts,
    namedKeys,
    keyCache,
    ...(deps.audit ? { audit: deps.audit } : {}),
  });
  const members = createWorkspaceMembers({
    store,
    clock,
    accounts,
    namedKeys,
    apiKeys,
    ...(deps.audit ? { audit: deps.audit } : {}),
  });
  const retention = createAccountRetention({
    accounts,
    clock,
    ...(deps.audit ? { audit: deps.audit } : {}),
  });
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

  async function accountProfile(accountId: string): Promise<AccountProfile | null> {
    const doc = await accounts.get(accountId);
    if (!doc) return null;
    return {
      id: doc._id,
      tier: doc.tier,
      credits_balance: doc.credits,
      created_at: doc.created_at,
      email: doc.email ?? null,
    };
  }

  return {
    access,
    credits,
    idempotency,
    ipLimiter,
    readLimiter,
    rateLimiter,
    accounts,
    namedKeys,
    apiKeys,
    members,
    retention,
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
    accountProfile,
    clock,
    logger,
    async start() {
      await accounts.init();
      await namedKeys.init();
      await members.init();
      await charging.start();
      await keyCache.start();
    },
    async stop() {
      await charging.stop();
      await keyCache.stop();
    },
  };
}
