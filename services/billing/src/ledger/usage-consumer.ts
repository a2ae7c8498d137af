import type { EventBus, Subscription } from '@subx/ports';
import { RetriableError } from '@subx/ports';
import { creditUsageV1 } from '@subx/contracts';
import { countBillingEvent } from '@subx/service-kit';
import { InvalidUsageEventError, type UsageLedger } from './usage-ledger.ts';

export const CREDIT_USAGE_TOPIC = 'billing.credit-usage.v1';
export const BILLING_GROUP_ID = 'billing-ledger';

interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/**
 * Consumes billing.credit-usage.v1 into the ledger. A message that cannot be decoded or
 * validated is poison: it is thrown as a plain error, so the bus dead-letters it after its
 * attempts. Store failures are retriable: the message stays uncommitted and is redelivered.
 */
export async function startUsageConsumer(deps: {
  bus: EventBus;
  ledger: UsageLedger;
  logger: Logger;
  topic?: string;
  groupId?: string;
}): Promise<Subscription> {
  const topic = deps.topic ?? CREDIT_USAGE_TOPIC;
  await deps.bus.ensureTopics([topic]);
  return deps.bus.subscribe({
    groupId: deps.groupId ?? BILLING_GROUP_ID,
    topics: [topic],
    fromBeginning: true,
    handler: async (message) => {
      let event: creditUsageV1.CreditUsage;
      try {
        event = creditUsageV1.CreditUsage.decode(message.value);
      } catch (err) {
        countBillingEvent('rejected');
        throw new InvalidUsageEventError(`undecodable credit-usage event: ${(err as Error).message}`);
      }
      try {
        const outcome = await deps.ledger.record(event);
        countBillingEvent(outcome === 'duplicate' ? 'duplicate' : 'applied');
        if (outcome === 'duplicate') {
          deps.logger.info({ event_id: event.envelope?.eventId }, 'duplicate credit-usage event ignored');
        }
      } catch (err) {
        if (err instanceof InvalidUsageEventError) {
          countBillingEvent('rejected');
          throw err;
        }
        throw new RetriableError('ledger write failed', { cause: err });
      }
    },
  });
}
