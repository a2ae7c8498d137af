/**
 * The delivery outbox and its worker. `enqueue` writes one document per (subject, event) into
 * `webhook_deliveries` (the `_id` makes a second enqueue of the same pair a no-op); every gateway
 * replica polls for due deliveries, claims each with a lease (a conditional findOneAndUpdate, so
 * two replicas never send the same attempt), checks the target again (DNS may have changed since
 * the job was created: rebinding), signs with the account's current secrets, sends one bounded
 * attempt and records it, then schedules the next by @subx/webhooks' retry schedule (about 27.6 h
 * in all). A replica that dies mid-attempt leaves a lease that expires; another takes over.
 *
 * Delivery is at least once: a crash after the receiver answered and before the record was written
 * sends that attempt again, with the same `webhook-id`, which receivers use to drop repeats.
 */
import { randomUUID } from 'node:crypto';
import { DuplicateKeyError } from '@subx/ports';
import type { Clock, DocumentStore } from '@subx/ports';
import { AppError, Errors } from '@subx/errors';
import {
  deliverWebhook,
  nextRetryDelayMs,
  resolveWebhookTarget,
  signWebhook,
  WebhookTargetRefusedError,
} from '@subx/webhooks';
import type { HostLookup, WebhookTargetRefusal } from '@subx/webhooks';
import type { Logger } from '@subx/ports';
import type { WebhookConfig } from './config.ts';
import type { WebhookSecrets } from './secrets.ts';
import { countWebhookDelivery, observeWebhookAttempt } from './metrics.ts';

export const WEBHOOK_DELIVERIES_COLLECTION = 'webhook_deliveries';

/** @public (the job runner's, through index.ts) */
export type WebhookEventType = 'job.completed' | 'job.failed' | 'job.canceled' | 'watch.new_videos';
const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = [
  'job.completed',
  'job.failed',
  'job.canceled',
  'watch.new_videos',
];

export interface WebhookAttemptRecord {
  attempt: number;
  at: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

/** @public (the job's `webhook` field, through index.ts) */
export interface WebhookDeliveryState {
  url: string;
  event: WebhookEventType;
  /** The `webhook-id` header value, stable across retries. */
  webhook_id: string;
  /** failed = retries exhausted, the receiver answered 410 Gone, or the target was refused. */
  status: 'pending' | 'delivered' | 'failed';
  /** Capped: the first attempt and the last ATTEMPTS_KEPT_LAST. */
  attempts: WebhookAttemptRecord[];
  next_attempt_at: string | null;
}

interface EnqueueInput {
  accountId: string;
  url: string;
  /** What the event is about (the job id); with `event`, the idempotency key. */
  subject: string;
  event: WebhookEventType;
  data: Record<string, unknown>;
}

export interface WebhookDeliveries {
  /** Idempotent per (subject, event): a second enqueue of the same pair does nothing. */
  enqueue(input: EnqueueInput): Promise<void>;
  /** The latest delivery of this subject (the job id), or null. */
  stateOf(subject: string): Promise<WebhookDeliveryState | null>;
  /**
   * Throws AppError INVALID_REQUEST (details.reason: invalid_url, unsupported_scheme,
   * credentials_in_url, unresolvable, private_address) for a URL that is not http(s), too long,
   * carries credentials, does not resolve or resolves to a private/loopback/link-local address
   * (unless WEBHOOK_ALLOW_PRIVATE_NETWORKS=true). The DNS wait is bounded (5 s).
   */
  checkTarget(url: string): Promise<void>;
}

export interface WebhookWorker {
  /** Creates the indexes of the worker's queries. Idempotent. */
  init(): Promise<void>;
  /** Deletes deliveries that ended (delivered or failed) longer ago than the retention; how many. */
  prune(): Promise<number>;
  /** Claims and runs what is due now (up to the free concurrency); resolves when those attempts are recorded. */
  tick(): Promise<number>;
  start(): void;
  /** No new claims; waits for attempts in flight, at most the attempt timeout plus the DNS bound. */
  stop(): Promise<void>;
}

interface DeliveryDoc {
  _id: string;
  account_id: string;
  url: string;
  subject: string;
  event: WebhookEventType;
  webhook_id: string;
  /** The exact body sent on every attempt (the signature covers these bytes). */
  payload: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: WebhookAttemptRecord[];
  attempt_count: number;
  next_attempt_at: number | null;
  lease_until: number;
  lease_owner: string | null;
  created_at: number;
  updated_at: number;
  [key: string]: unknown;
}

/** Attempts kept on the document besides the first: a bound on its size whatever the schedule. */
const ATTEMPTS_KEPT_LAST = 20;
/** Characters of an error (or of the receiver's answer) kept per attempt. */
const MAX_ERROR_LENGTH = 300;
/** The bound on a target's DNS answer (the package's default, said here so stop() can count on it). */
const LOOKUP_TIMEOUT_MS = 5_000;
/** Refusals that no retry can fix: the URL itself is wrong, or points where we never deliver. */
const FINAL_REFUSALS: ReadonlySet<WebhookTargetRefusal> = new Set([
  'invalid_url',
  'unsupported_scheme',
  'credentials_in_url',
  'private_address',
]);

const WEBHOOK_URL_REFUSED =
  'webhook_url is not a URL we deliver to: it must be an absolute https (or http) URL of at most ' +
  '2,048 characters, without credentials, whose host resolves to a public address.';

/**
 * The reason a caller sees: what the URL itself says wrong, or `unresolvable` for both a host that
 * does not resolve and one that resolves to a private address (which of the two would tell which
 * internal names exist).
 */
function publicRefusalReason(reason: WebhookTargetRefusal): WebhookTargetRefusal {
  return reason === 'private_address' ? 'unresolvable' : reason;
}

export function capAttempts(attempts: WebhookAttemptRecord[]): WebhookAttemptRecord[] {
  if (attempts.length <= ATTEMPTS_KEPT_LAST + 1) return attempts;
  return [attempts[0]!, ...attempts.slice(-ATTEMPTS_KEPT_LAST)];
}

export interface WebhookDeliveriesDeps {
  store: DocumentStore;
  clock: Clock;
  logger: Logger;
  config: WebhookConfig;
  secrets: WebhookSecrets;
  lookup?: HostLookup;
  /** Spread of retries (0..1 → up to 10% later); default random. Tests pin it. */
  jitter?: () => number;
  /** How long a delivery that ended stays readable (`stateOf`). Default DELIVERY_RETENTION_MS. */
  retentionMs?: number;
}

/** Queries one dispatch makes at most while accounts at their share are being left out. */
const DISPATCH_LOOKS = 4;
/** Deliveries that ended are kept 30 days (the job's delivery log), then pruned. */
const DELIVERY_RETENTION_MS = 30 * 86_400_000;
/** How often a polling worker prunes. */
const PRUNE_EVERY_MS = 3_600_000;

export function createWebhookDeliveries(deps: WebhookDeliveriesDeps): WebhookDeliveries & WebhookWorker {
  const { clock, logger, config, secrets } = deps;
  const deliveries = deps.store.collection<DeliveryDoc>(WEBHOOK_DELIVERIES_COLLECTION);
  const jitter = deps.jitter ?? Math.random;
  const retentionMs = deps.retentionMs ?? DELIVERY_RETENTION_MS;
  let lastPrune = 0;
  const policy = {
    allowPrivateNetworks: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    lookupTimeoutMs: LOOKUP_TIMEOUT_MS,
    ...(deps.lookup ? { lookup: deps.lookup } : {}),
  };
  // A claim outlives the longest attempt (DNS bound + attempt bound) with room to record it.
  const leaseMs = LOOKUP_TIMEOUT_MS + config.WEBHOOK_TIMEOUT_MS + 30_000;
  const owner = randomUUID();
  const inFlight = new Set<Promise<void>>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let polling = false;
  let stopped = false;
  let ticking: Promise<number> | undefined;

  function toState(doc: DeliveryDoc): WebhookDeliveryState {
    return {
      url: doc.url,
      event: doc.event,
      webhook_id: doc.webhook_id,
      status: doc.status,
      attempts: doc.attempts,
      next_attempt_at: doc.next_attempt_at === null ? null : new Date(doc.next_attempt_at).toISOString(),
    };
  }

  async function attempt(doc: DeliveryDoc): Promise<void> {
    const number = doc.attempt_count + 1;
    const at = clock.now();
    const t0 = performance.now();
    let outcome: string;
    let record: WebhookAttemptRecord;
    let final: 'delivered' | 'failed' | null = null;
    try {
      const target = await resolveWebhookTarget(doc.url, policy);
      const headers = signWebhook({
        id: doc.webhook_id,
        body: doc.payload,
        secrets: await secrets.signingSecrets(doc.account_id),
        now: new Date(at),
      });
      const result = await deliverWebhook({
        target,
        headers,
        body: doc.payload,
        timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      });
      outcome = result.outcome;
      // The receiver's own words are kept for public receivers only: where private networks are
      // allowed, an answer may come from an internal service, and the log is the account's to read.
      const detail = config.WEBHOOK_ALLOW_PRIVATE_NETWORKS ? undefined : result.detail;
      const error =
        result.outcome === 'delivered'
          ? null
          : `${result.outcome}${result.status === null ? '' : ` ${result.status}`}${detail ? `: ${detail}` : ''}`;
      record = {
        attempt: number,
        at: new Date(at).toISOString(),
        status_code: result.status,
        error: error === null ? null : error.slice(0, MAX_ERROR_LENGTH),
        duration_ms: result.duration_ms,
      };
      if (result.outcome === 'delivered') final = 'delivered';
      // 410 Gone: the receiver says the endpoint is no more (Standard Webhooks' convention).
      else if (result.status === 410) final = 'failed';
    } catch (error) {
      const duration = Math.round(performance.now() - t0);
      if (error instanceof WebhookTargetRefusedError) {
        outcome = 'refused';
        record = {
          attempt: number,
          at: new Date(at).toISOString(),
          status_code: null,
          // The reason only: the refusal's own message names the host and its addresses.
          error: `target refused (${publicRefusalReason(error.reason)})`,
          duration_ms: duration,
        };
        if (FINAL_REFUSALS.has(error.reason)) final = 'failed';
      } else {
        // Our side failed before anything was sent (the store, a secret that cannot be read):
        // counted as an attempt and retried by the schedule, so it neither loops every lease nor
        // hides from the job's attempt log. The cause goes to our log only.
        logger.error(
          { err: error, delivery: doc._id, attempt: number },
          'webhook: attempt could not be made',
        );
        outcome = 'error';
        record = {
          attempt: number,
          at: new Date(at).toISOString(),
          status_code: null,
          error: 'internal error before sending; retried',
          duration_ms: duration,
        };
      }
    }
    observeWebhookAttempt(outcome, record.duration_ms / 1000);

    let nextAt: number | null = null;
    if (final === null) {
      const delay = nextRetryDelayMs(number, jitter());
      if (delay === null) final = 'failed';
      else nextAt = clock.now() + delay;
    }
    const status = final ?? 'pending';
    const written = await deliveries.updateOne(
      { _id: doc._id, lease_owner: owner, attempt_count: doc.attempt_count },
      {
        $set: {
          attempts: capAttempts([...doc.attempts, record]),
          attempt_count: number,
          status,
          next_attempt_at: nextAt,
          lease_until: 0,
          lease_owner: null,
          updated_at: clock.now(),
        },
      },
    );
    if (written.matchedCount === 0) {
      // The lease ran out and another replica took the delivery over: its record wins.
      logger.warn(
        { delivery: doc._id, attempt: number },
        'webhook: lease lost before the attempt was recorded',
      );
      return;
    }
    if (final) countWebhookDelivery(final);
    const log = final === 'failed' ? logger.warn : logger.info;
    log.call(
      logger,
      {
        delivery: doc._id,
        event: doc.event,
        attempt: number,
        status,
        status_code: record.status_code,
        next_attempt_at: nextAt === null ? null : new Date(nextAt).toISOString(),
      },
      'webhook attempt',
    );
  }

  async function claim(doc: DeliveryDoc): Promise<DeliveryDoc | null> {
    const now = clock.now();
    return deliveries.findOneAndUpdate(
      {
        _id: doc._id,
        status: 'pending',
        attempt_count: doc.attempt_count,
        lease_until: { $lte: now },
      },
      { $set: { lease_until: now + leaseMs, lease_owner: owner } },
      { returnDocument: 'after' },
    );
  }

  /** Claims what is due, up to the free slots, and starts those attempts; returns them running. */
  /** Attempts running plus claims being made: what WEBHOOK_CONCURRENCY bounds. */
  let claiming = 0;
  const busy = () => inFlight.size + claiming;

  /** Attempts running or being claimed per account: what WEBHOOK_CONCURRENCY_PER_ACCOUNT bounds. */
  const perAccount = new Map<string, number>();
  const take = (accountId: string) => perAccount.set(accountId, (perAccount.get(accountId) ?? 0) + 1);
  const give = (accountId: string) => {
    const left = (perAccount.get(accountId) ?? 1) - 1;
    if (left <= 0) perAccount.delete(accountId);
    else perAccount.set(accountId, left);
  };
  const accountsAtCap = () =>
    [...perAccount].filter(([, n]) => n >= config.WEBHOOK_CONCURRENCY_PER_ACCOUNT).map(([id]) => id);

  /**
   * Claims what is due, up to the free slots, and starts those attempts; returns them running.
   * Accounts whose receivers already hold their share of the slots are left out of the query, so
   * one account's slow receivers never keep another's deliveries waiting for a slot.
   */
  async function dispatch(): Promise<Promise<void>[]> {
    const started: Promise<void>[] = [];
    for (let look = 0; look < DISPATCH_LOOKS; look++) {
      const free = config.WEBHOOK_CONCURRENCY - busy();
      if (stopped || free <= 0) break;
      const now = clock.now();
      const due = await deliveries.find(
        {
          status: 'pending',
          next_attempt_at: { $lte: now },
          lease_until: { $lte: now },
          account_id: { $nin: accountsAtCap() },
        },
        { sort: { next_attempt_at: 1 }, limit: free },
      );
      let skipped = false;
      for (const candidate of due) {
        // A slot is taken before the claim, so a poll and a tick running together stay within the bound.
        if (stopped || busy() >= config.WEBHOOK_CONCURRENCY) break;
        if ((perAccount.get(candidate.account_id) ?? 0) >= config.WEBHOOK_CONCURRENCY_PER_ACCOUNT) {
          skipped = true; // its account's share is taken: the next look leaves that account out
          continue;
        }
        claiming++;
        take(candidate.account_id);
        let doc: DeliveryDoc | null;
        try {
          doc = await claim(candidate);
        } finally {
          claiming--;
        }
        if (!doc) {
          give(candidate.account_id);
          continue; // another replica claimed it first
        }
        const claimed = doc;
        const run: Promise<void> = attempt(claimed)
          .catch((err: unknown) =>
            logger.error({ err, delivery: claimed._id }, 'webhook: recording the attempt failed'),
          )
          .finally(() => {
            inFlight.delete(run);
            give(claimed.account_id);
          });
        inFlight.add(run);
        started.push(run);
      }
      if (!skipped) break;
    }
    return started;
  }

  async function prune(): Promise<number> {
    const result = await deliveries.deleteMany({
      status: { $in: ['delivered', 'failed'] },
      updated_at: { $lt: clock.now() - retentionMs },
    });
    return result.deletedCount;
  }

  function tick(): Promise<number> {
    // One poll at a time per process; a tick during a tick shares its result.
    ticking ??= dispatch()
      .then(async (started) => {
        await Promise.all(started);
        return started.length;
      })
      .catch((err: unknown) => {
        logger.warn({ err }, 'webhook: polling for due deliveries failed');
        return 0;
      })
      .finally(() => {
        ticking = undefined;
      });
    return ticking;
  }

  function schedule() {
    if (stopped || !polling) return;
    timer = setTimeout(() => {
      // The poll does not wait for slow receivers: attempts run in the background, bounded by
      // WEBHOOK_CONCURRENCY, and the next poll fills the slots that freed up.
      void dispatch()
        .catch((err: unknown) => logger.warn({ err }, 'webhook: polling for due deliveries failed'))
        .then(async () => {
          if (clock.now() - lastPrune < PRUNE_EVERY_MS) return;
          lastPrune = clock.now();
          await prune().catch((err: unknown) =>
            logger.warn({ err }, 'webhook: pruning ended deliveries failed'),
          );
        })
        .finally(schedule);
    }, config.WEBHOOK_POLL_MS);
    timer.unref?.();
  }

  return {
    async enqueue(input) {
      if (!WEBHOOK_EVENT_TYPES.includes(input.event)) {
        throw new Error(`webhook: unknown event type ${String(input.event)}`);
      }
      const now = clock.now();
      const payload = JSON.stringify({
        type: input.event,
        timestamp: new Date(now).toISOString(),
        data: input.data,
      });
      try {
        await deliveries.insertOne({
          _id: `${input.subject}:${input.event}`,
          account_id: input.accountId,
          url: input.url,
          subject: input.subject,
          event: input.event,
          webhook_id: `msg_${randomUUID().replaceAll('-', '')}`,
          payload,
          status: 'pending',
          attempts: [],
          attempt_count: 0,
          next_attempt_at: now,
          lease_until: 0,
          lease_owner: null,
          created_at: now,
          updated_at: now,
        });
      } catch (error) {
        if (error instanceof DuplicateKeyError) return; // enqueued before: nothing to do
        throw error;
      }
    },
    async stateOf(subject) {
      const [latest] = await deliveries.find({ subject }, { sort: { created_at: -1 }, limit: 1 });
      return latest ? toState(latest) : null;
    },
    async checkTarget(url) {
      try {
        await resolveWebhookTarget(url, policy);
      } catch (error) {
        if (error instanceof WebhookTargetRefusedError) {
          // One message for every refusal, naming no host or address: the answer must not tell a
          // caller which internal names resolve, or to what.
          throw Errors.invalidRequest(WEBHOOK_URL_REFUSED, { reason: publicRefusalReason(error.reason) });
        }
        throw error instanceof AppError ? error : Errors.internal(error);
      }
    },
    async init() {
      await deliveries.createIndex({ status: 1, next_attempt_at: 1 }, { name: 'webhook_due' });
      await deliveries.createIndex({ subject: 1, created_at: -1 }, { name: 'webhook_subject' });
      await deliveries.createIndex({ status: 1, updated_at: 1 }, { name: 'webhook_prune' });
    },
    prune,
    tick,
    start() {
      if (polling) return;
      polling = true;
      schedule();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      const pending = [...inFlight, ...(ticking ? [ticking] : [])];
      if (pending.length === 0) return;
      // Each attempt is bounded (DNS, then WEBHOOK_TIMEOUT_MS); an attempt cut short here keeps its
      // lease, which expires, and another replica (or this one after a restart) tries again.
      let bound: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.allSettled(pending),
        new Promise<void>((resolve) => {
          bound = setTimeout(resolve, LOOKUP_TIMEOUT_MS + config.WEBHOOK_TIMEOUT_MS + 1_000);
        }),
      ]);
      clearTimeout(bound);
    },
  };
}
