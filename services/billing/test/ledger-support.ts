/** Test helpers shared by the billing unit and integration tests. */
import { randomUUID } from 'node:crypto';
import { creditUsageV1, requestUsageV1 } from '@subx/contracts';

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

/** A valid request-usage report: `ops` are the source's cumulative counts per operation. */
export function requestReport(overrides: {
  accountId?: string;
  date?: string;
  source?: string;
  sequence: number;
  ops: Record<string, number>;
  eventId?: string;
}): requestUsageV1.RequestUsage {
  return requestUsageV1.RequestUsage.fromPartial({
    envelope: {
      eventId: overrides.eventId ?? randomUUID(),
      occurredAt: '2026-03-10T12:00:00.000Z',
      accountId: overrides.accountId ?? 'acc-1',
    },
    date: overrides.date ?? '2026-03-10',
    source: overrides.source ?? '00000000-0000-4000-8000-000000000001',
    sequence: BigInt(overrides.sequence),
    operations: Object.entries(overrides.ops).map(([operation, requests]) => ({
      operation,
      requests: BigInt(requests),
    })),
  });
}
