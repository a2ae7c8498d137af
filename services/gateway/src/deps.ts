import type { Embedder } from '@subx/embeddings';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock, KeyValueStore } from '@subx/ports';
import type { AccessPricing } from '@subx/credits';
import type { AccountReadLimiter, IpRateLimiter } from './access/rate-limit.ts';
import type { AccessControl, AccountProfile, AccountStanding, IdempotencyStore } from './access/types.ts';
import type { UsageReader } from './access/usage.ts';
import type { ApiKeys } from './access/api-keys.ts';
import type { AccountRetention } from './access/retention.ts';
import type { Account, CreditLedger } from '@subx/credits';
import type { Backends } from '@subx/backends';
import type { Config } from './config.ts';
import type { FanOut } from '@subx/fanout';
import type { JobsApi, WatchesApi, WebhookSecretsApi } from '@subx/backends';
import type { AuditLog, AuditReader } from './domain/audit-log.ts';
import type { WorkspaceMembers } from './access/workspace-members.ts';

export interface GatewayDeps {
  config: Config;
  /** A pino logger (or fastify-compatible); omitted: no logging. */
  logger?: FastifyBaseLogger;
  access: AccessControl;
  credits: CreditLedger;
  idempotency: IdempotencyStore;
  ipLimiter: IpRateLimiter;
  /** Per-account limit of the free reads (job and webhook-secret routes, MCP's handshake). */
  readLimiter: AccountReadLimiter;
  /** GET /api/v1/account: the key's balance and today's requests; absent: that route answers 503. */
  accountStanding?: (account: Account) => Promise<AccountStanding>;
  /** The account's record for its export (GET /api/v1/account/export); absent: that route answers 503. */
  accountProfile?: (accountId: string) => Promise<AccountProfile | null>;
  /** Requests and credits per day (billing's ledger); absent: the export has no `usage_day` lines. */
  usage?: UsageReader;
  backends: Backends;
  fanOut: FanOut;
  /** The bulk jobs API (src/jobs); absent: its routes are not mounted. */
  jobs?: JobsApi;
  /** Watches (src/watches); absent: their routes are not mounted. */
  watches?: WatchesApi;
  /** Per-user "summary paid" markers. */
  kv: KeyValueStore;
  clock: Clock;
  /** Defaults to the access module's DEFAULT_PRICING. */
  pricing?: AccessPricing;
  /** /health/ready: false while draining or when a dependency is unusable. */
  readiness?: () => Promise<boolean>;
  /** Reported by /health; defaults to this package's version. */
  version?: string;
  /** Chunk embeddings (EMBEDDINGS_*); absent: `embed: true` answers 422 EMBEDDINGS_NOT_CONFIGURED. */
  embedder?: Embedder;
  /** The account's keys (`/api/v1/keys`); absent: those routes answer 503. */
  apiKeys?: ApiKeys;
  /** The workspace's members, for its export; absent: the export has no `member` lines. */
  members?: Pick<WorkspaceMembers, 'list'>;
  /** The account's data retention (`/api/v1/account/retention`); absent: those routes answer 503. */
  retention?: AccountRetention;
  /** Job webhooks: signing secrets and deliveries; without it the secret routes answer 503. */
  webhookSecrets?: WebhookSecretsApi;
  /**
   * The accounts' audit log (src/audit): what the wings record, and GET /api/v1/audit's pages;
   * absent: nothing is recorded and that route answers 503.
   */
  audit?: AuditLog & AuditReader;
}
