/**
 * Deleting a workspace (an account) and everything it owns, at its owner's request (GDPR art. 17;
 * DELETE /admin/v1/accounts/{id}). In this order:
 *
 * 1. the account is marked `deleting_at` and every key of it (primary and named) is revoked and
 *    dropped from the key cache of every replica (accounts.ts `beginDeletion`): from its answer on,
 *    each key is 401 everywhere, and the account reads as unknown (404) to every other route;
 * 2. the job service cancels the running jobs, stops the watches and deletes jobs, results,
 *    chunks' sources, watches, webhook deliveries and secrets (DeleteAccountData);
 * 3. the gateway's own records of the account: named keys, audit events, workspace members, daily
 *    request counts (once every replica wrote its last count of it: two outbox intervals after
 *    step 1), and the KeyValueStore entries keyed by it (idempotency records, counters,
 *    paid-summary markers);
 * 4. the `AccountDeleted` event is written to this module's outbox, from which the relay publishes
 *    it to `accounts.v1` (a Kafka outage delays it, loses nothing); billing pseudonymises its
 *    ledger on it;
 * 5. last, the account document itself.
 *
 * Every step deletes by the account's id and may be repeated: a deletion that failed half-way
 * (a crash, the job service unreachable) leaves the account marked, its keys dead, and a second
 * call finishes it. Once step 5 is done the account is unknown, and a second call is 404.
 *
 * What is left, on purpose: the credit and request-usage outbox entries of the account still
 * pending for billing (published within seconds, pruned 10 minutes later; billing pseudonymises
 * usage that arrives after the deletion), and the deletion's own outbox entry, pruned 10 minutes
 * after it was published.
 */
import { randomUUID } from 'node:crypto';
import { nothingDeleted, type AccountDataApi, type AccountDataDeleted } from '@subx/backends';
import { accountDeletedV1, CLOUD_EVENT_KINDS, TOPICS } from '@subx/contracts';
import { ACCOUNTS_COLLECTION, DAILY_REQUESTS_COLLECTION, createOutboxRelay } from '@subx/credits';
import type { OutboxEntry, OutboxRelay, OutboxSpec } from '@subx/credits';
import type { Clock, DocumentStore, EventBus, KeyValueStore, Logger } from '@subx/ports';
import { currentTraceParent } from '@subx/service-kit';
import type { AccountRepository } from '../access/accounts.ts';
import { NAMED_KEYS_COLLECTION } from '../access/named-keys.ts';
import { WORKSPACE_MEMBERS_COLLECTION } from '../access/workspace-members.ts';
import { AUDIT_EVENTS_COLLECTION } from '../audit/audit-log.ts';

/** The gateway's collections that hold an account's records by `account_id`. */
const ACCOUNT_OWNED_COLLECTIONS = {
  audit_events: AUDIT_EVENTS_COLLECTION,
  workspace_members: WORKSPACE_MEMBERS_COLLECTION,
  daily_requests: DAILY_REQUESTS_COLLECTION,
} as const;

/** Prefixes of the KeyValueStore entries keyed by account id (each ends in `<account id>:`). */
const KEY_VALUE_PREFIXES = [
  'idem',
  'rl:day',
  'rl:reads',
  'usage:cred',
  'usage:month-cred',
  'summary-paid',
  'model-seconds',
];

const DELETIONS_COLLECTION = 'account_deletions';
const DELETION_OUTBOX: OutboxSpec = {
  collection: DELETIONS_COLLECTION,
  finished: { kind: 'account_deleted' },
  pruneIndex: { outbox_status: 1, created_at: 1 },
};

interface DeletionDoc extends OutboxEntry {
  kind: 'account_deleted';
}

/** The answer of DELETE /admin/v1/accounts/{id} (`accountDeletedSchema`). */
interface WorkspaceDeleted {
  account_id: string;
  /** When the deletion was asked for: keys were refused from then on. */
  requested_at: string;
  deleted_at: string;
  removed: Omit<AccountDataDeleted, 'canceled_jobs' | 'jobs_still_held'> & {
    account: number;
    api_keys: number;
    audit_events: number;
    workspace_members: number;
    daily_requests: number;
    cache_entries: number;
  };
  canceled_jobs: number;
}

export interface WorkspaceDeletion {
  /** What was removed; null for an account that does not exist (or is gone already). */
  delete(accountId: string): Promise<WorkspaceDeleted | null>;
  /** Publishes the deletion events (tests flush it). */
  relay: OutboxRelay;
  /** Creates the outbox's indexes, ensures the topic, starts the relay. */
  start(): Promise<void>;
  /** Stops the relay after a last publish. */
  stop(): Promise<void>;
}

export interface WorkspaceDeletionDeps {
  store: DocumentStore;
  kv: KeyValueStore;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  accounts: Pick<AccountRepository, 'beginDeletion'>;
  /** The job service's part; absent on a gateway without jobs, watches and webhooks. */
  accountData?: AccountDataApi;
  /** ACCOUNT_EVENTS_TOPIC; default `accounts.v1`. */
  topic?: string;
  /** How often the relay looks for unpublished events (OUTBOX_INTERVAL_MS). Default 1 s. */
  outboxIntervalMs?: number;
  /** Writes this replica's pending request counts (the access module's `requestLog.flush`). */
  flushRequestCounts?: () => Promise<void>;
  /**
   * How long after the keys were refused the request counts are deleted: every replica writes what
   * it counted once per OUTBOX_INTERVAL_MS, so after two intervals none has a count of the
   * workspace left to write. Default two outbox intervals.
   */
  requestCountsSettleMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

export function createWorkspaceDeletion(deps: WorkspaceDeletionDeps): WorkspaceDeletion {
  const { store, kv, bus, clock, logger } = deps;
  const topic = deps.topic ?? TOPICS.accountEvents.default;
  const deletions = store.collection<DeletionDoc>(DELETIONS_COLLECTION);
  const outboxIntervalMs = deps.outboxIntervalMs ?? 1_000;
  const countsSettleMs = deps.requestCountsSettleMs ?? 2 * outboxIntervalMs;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const relay = createOutboxRelay({
    store,
    bus,
    topic,
    cloudEvent: CLOUD_EVENT_KINDS.accountEvents,
    clock,
    logger,
    outbox: DELETION_OUTBOX,
    intervalMs: outboxIntervalMs,
  });

  /** The day counts, once no replica has one of the workspace left to write (bounded wait). */
  async function deleteRequestCounts(accountId: string, refusedAtMs: number): Promise<number> {
    const wait = refusedAtMs + countsSettleMs - clock.now();
    if (wait > 0) await sleep(Math.min(wait, countsSettleMs));
    await deps.flushRequestCounts?.();
    return deleteByAccount(ACCOUNT_OWNED_COLLECTIONS.daily_requests, accountId);
  }

  async function deleteByAccount(collection: string, accountId: string): Promise<number> {
    return (await store.collection(collection).deleteMany({ account_id: accountId })).deletedCount;
  }

  async function deleteCacheEntries(accountId: string): Promise<number> {
    let deleted = 0;
    for (const prefix of KEY_VALUE_PREFIXES) deleted += await kv.deleteByPrefix(`${prefix}:${accountId}:`);
    return deleted;
  }

  /** The outbox entry of the event, written once however often the deletion is repeated. */
  async function announce(accountId: string, requestedAt: string, deletedAt: string): Promise<void> {
    if (await deletions.findOne({ key: accountId, topic })) return;
    const eventId = randomUUID();
    const payload = accountDeletedV1.AccountDeleted.encode({
      envelope: {
        eventId,
        occurredAt: deletedAt,
        accountId,
        idempotencyKey: eventId,
        traceParent: currentTraceParent() ?? '',
      },
      requestedAt,
    }).finish();
    const now = clock.now();
    await deletions.insertOne({
      _id: eventId,
      kind: 'account_deleted',
      outbox_status: 'pending',
      topic,
      key: accountId,
      payload: Buffer.from(payload).toString('base64'),
      committed_at: now,
      created_at: now,
    });
    relay.kick();
  }

  return {
    relay,

    async delete(accountId) {
      const marked = await deps.accounts.beginDeletion(accountId);
      if (!marked) return null;
      const refusedAtMs = clock.now();
      const requestedAt = marked.deleting_at ?? new Date(clock.now()).toISOString();
      const { canceled_jobs, jobs_still_held, ...inJobs } = deps.accountData
        ? await deps.accountData.delete(accountId)
        : nothingDeleted();
      if (jobs_still_held > 0) {
        logger.warn(
          { account_id: accountId, jobs_still_held },
          'deleted jobs whose runner still held them; a result it writes later is left without its job',
        );
      }
      const namedKeys = await deleteByAccount(NAMED_KEYS_COLLECTION, accountId);
      const removed: WorkspaceDeleted['removed'] = {
        account: 0,
        // The primary key lives on the account document.
        api_keys: namedKeys + 1,
        ...inJobs,
        audit_events: await deleteByAccount(ACCOUNT_OWNED_COLLECTIONS.audit_events, accountId),
        workspace_members: await deleteByAccount(ACCOUNT_OWNED_COLLECTIONS.workspace_members, accountId),
        daily_requests: await deleteRequestCounts(accountId, refusedAtMs),
        cache_entries: await deleteCacheEntries(accountId),
      };
      const deletedAt = new Date(clock.now()).toISOString();
      await announce(accountId, requestedAt, deletedAt);
      removed.account = (
        await store.collection(ACCOUNTS_COLLECTION).deleteOne({ _id: accountId })
      ).deletedCount;
      logger.info({ account_id: accountId, removed }, 'workspace deleted');
      return {
        account_id: accountId,
        requested_at: requestedAt,
        deleted_at: deletedAt,
        removed,
        canceled_jobs,
      };
    },

    async start() {
      await deletions.createIndex({ key: 1 }, { name: 'deletion_by_account' });
      await relay.init();
      await bus.ensureTopics([topic]).catch((err: unknown) => {
        // The relay keeps the events pending until the bus accepts them.
        logger.warn({ err, topic }, 'could not ensure the account events topic');
      });
      relay.start();
    },

    async stop() {
      await relay.stop();
    },
  };
}
