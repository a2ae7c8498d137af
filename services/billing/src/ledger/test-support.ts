/** Test helpers shared by the billing unit and integration tests. */
import { randomUUID } from 'node:crypto';
import { creditUsageV1 } from '@subx/contracts';

/** A valid credit-usage event; every field can be overridden. */
export function usageEvent(
  overrides: {
    eventId?: string;
    accountId?: string;
    operation?: string;
    credits?: number;
    occurredAt?: string;
  } = {},
): creditUsageV1.CreditUsage {
  return creditUsageV1.CreditUsage.fromPartial({
    envelope: {
      eventId: overrides.eventId ?? randomUUID(),
      occurredAt: overrides.occurredAt ?? '2026-03-10T12:00:00.000Z',
      accountId: overrides.accountId ?? 'acc-1',
      idempotencyKey: 'idem',
    },
    operation: overrides.operation ?? 'batch',
    credits: BigInt(overrides.credits ?? 3),
    requestId: 'req',
    successfulItems: 3,
    attemptedItems: 4,
  });
}
