import type { EventBus, Logger, Subscription } from '@subx/ports';
import { RetryableError } from '@subx/ports';
import { CONSUMER_GROUPS, TOPICS, accountDeletedV1, creditUsageV1, requestUsageV1 } from '@subx/contracts';
import { countBillingEvent } from '@subx/service-kit';
import { InvalidUsageEventError, type UsageLedger } from './usage-ledger.ts';
import type { RequestCounts } from './request-counts.ts';
import type { AccountPseudonyms } from './pseudonyms.ts';

export const CREDIT_USAGE_TOPIC = TOPICS.creditUsage.default;
export const BILLING_GROUP_ID = CONSUMER_GROUPS.billingLedger.default;
export const REQUEST_USAGE_TOPIC = TOPICS.requestUsage.default;
/** Its own group: one group with members subscribed to different topics breaks kafkajs' assignment. */
export const REQUEST_USAGE_GROUP_ID = 'billing-requests';
const ACCOUNT_EVENTS_TOPIC = TOPICS.accountEvents.default;
const ACCOUNT_DELETIONS_GROUP_ID = CONSUMER_GROUPS.billingAccountDeletions.default;

/**
 * One consumer of a billing topic. A message that cannot be decoded or validated is poison: it is
 * thrown as a plain error, so the bus dead-letters it after its attempts. Store failures are
 * retryable: the message stays uncommitted and is redelivered.
 */
async function startBillingConsumer<T>(deps: {
  bus: EventBus;
  topic: string;
  groupId: string;
  what: string;
  decode(bytes: Uint8Array): T;
  apply(event: T): Promise<'new' | 'duplicate'>;
  onDuplicate?(event: T): void;
  /** Counted in subx_billing_events_total (credit-usage events only: the metric's meaning). */
  metered: boolean;
}): Promise<Subscription> {
  const count = (result: 'applied' | 'duplicate' | 'rejected') => {
    if (deps.metered) countBillingEvent(result);
  };
  await deps.bus.ensureTopics([deps.topic]);
  return deps.bus.subscribe({
    groupId: deps.groupId,
    topics: [deps.topic],
    fromBeginning: true,
    handler: async (message) => {
      let event: T;
      try {
        event = deps.decode(message.value);
      } catch (err) {
        count('rejected');
        throw new InvalidUsageEventError(`undecodable ${deps.what} event: ${(err as Error).message}`);
      }
      try {
        const outcome = await deps.apply(event);
        count(outcome === 'duplicate' ? 'duplicate' : 'applied');
        if (outcome === 'duplicate') deps.onDuplicate?.(event);
      } catch (err) {
        if (err instanceof InvalidUsageEventError) {
          count('rejected');
          throw err;
        }
        throw new RetryableError(`${deps.what} write failed`, { cause: err });
      }
    },
  });
}

/** Consumes billing.credit-usage.v1 into the ledger. */
export function startUsageConsumer(deps: {
  bus: EventBus;
  ledger: UsageLedger;
  logger: Logger;
  topic?: string;
  groupId?: string;
}): Promise<Subscription> {
  return startBillingConsumer({
    bus: deps.bus,
    topic: deps.topic ?? CREDIT_USAGE_TOPIC,
    groupId: deps.groupId ?? BILLING_GROUP_ID,
    what: 'credit-usage',
    metered: true,
    decode: (bytes) => creditUsageV1.CreditUsage.decode(bytes),
    apply: async (event) => ((await deps.ledger.record(event)) === 'duplicate' ? 'duplicate' : 'new'),
    onDuplicate: (event) =>
      deps.logger.info({ event_id: event.envelope?.eventId }, 'duplicate credit-usage event ignored'),
  });
}

/**
 * Consumes billing.request-usage.v1 into the request counts. A stale report (redelivered,
 * re-published, or overtaken by a newer one of its source) is routine and not logged.
 */
export function startRequestUsageConsumer(deps: {
  bus: EventBus;
  requests: RequestCounts;
  topic?: string;
  groupId?: string;
}): Promise<Subscription> {
  return startBillingConsumer({
    bus: deps.bus,
    topic: deps.topic ?? REQUEST_USAGE_TOPIC,
    groupId: deps.groupId ?? REQUEST_USAGE_GROUP_ID,
    what: 'request-usage',
    metered: false,
    decode: (bytes) => requestUsageV1.RequestUsage.decode(bytes),
    apply: async (event) => ((await deps.requests.apply(event)) === 'stale' ? 'duplicate' : 'new'),
  });
}

/**
 * Consumes accounts.v1: a deleted workspace's account id is replaced by a pseudonym in the ledger,
 * the daily aggregates and the request counts (pseudonyms.ts). Repeating it is harmless.
 */
export function startAccountDeletionConsumer(deps: {
  bus: EventBus;
  pseudonyms: AccountPseudonyms;
  logger: Logger;
  topic?: string;
  groupId?: string;
}): Promise<Subscription> {
  return startBillingConsumer({
    bus: deps.bus,
    topic: deps.topic ?? ACCOUNT_EVENTS_TOPIC,
    groupId: deps.groupId ?? ACCOUNT_DELETIONS_GROUP_ID,
    what: 'account-deleted',
    metered: false,
    decode: (bytes) => accountDeletedV1.AccountDeleted.decode(bytes),
    apply: async (event) => {
      const env = event.envelope;
      if (!env?.eventId) throw new InvalidUsageEventError('envelope.event_id is missing');
      if (!env.accountId) throw new InvalidUsageEventError('envelope.account_id is missing');
      const moved = await deps.pseudonyms.pseudonymise(env.accountId);
      // The event id, never the account's: the log must not link the two either.
      deps.logger.info({ event_id: env.eventId, ...moved }, 'deleted workspace pseudonymised');
      return 'new';
    },
  });
}
