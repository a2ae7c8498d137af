/**
 * Usage reports for the admin API. `UsageReader` is the seam: the billing service's GetUsage
 * (requests from billing.request-usage.v1, credits from the ledger of billing.credit-usage.v1)
 * implements it through `createBillingUsageReader`, which `startGateway` wires;
 * `createCounterUsageReader` reads the gateway's own records (daily_requests, KeyValueStore credit
 * counters) for an access module that has no billing service (tests, tooling).
 */
import type { billingV1 } from '@subx/contracts';
import type { KeyValueStore } from '@subx/ports';
import { METERED_OPERATIONS } from '@subx/credits';
import type { Operation } from '@subx/credits';
import type { DailyRequestLog } from '@subx/credits';
import { usageCreditsKey } from '@subx/credits';
import { DAY_MS, parseUtcDate, utcDate } from '@subx/credits';

interface OperationUsage {
  requests: number;
  credits: number;
}

interface DayUsage {
  /** YYYY-MM-DD (UTC). */
  date: string;
  requests: number;
  credits: number;
  /** Every operation, zeros included. */
  operations: Record<Operation, OperationUsage>;
}

interface AccountUsage {
  account_id: string;
  from: string;
  to: string;
  days: DayUsage[];
  total_requests: number;
  total_credits: number;
}

export interface UsageReader {
  /** `from` and `to` are inclusive YYYY-MM-DD UTC dates, already validated (from <= to). */
  getUsage(input: { accountId: string; from: string; to: string }): Promise<AccountUsage>;
}

/** The longest range the admin API accepts in one call. */
export const MAX_USAGE_RANGE_DAYS = 366;

function datesBetween(from: string, to: string): string[] {
  const start = parseUtcDate(from);
  const end = parseUtcDate(to);
  if (start === null || end === null) return [];
  const out: string[] = [];
  for (let t = start; t <= end; t += DAY_MS) out.push(utcDate(t));
  return out;
}

function emptyOperations(): Record<Operation, OperationUsage> {
  return Object.fromEntries(METERED_OPERATIONS.map((op) => [op, { requests: 0, credits: 0 }])) as Record<
    Operation,
    OperationUsage
  >;
}

function assemble(accountId: string, from: string, to: string, days: DayUsage[]): AccountUsage {
  return {
    account_id: accountId,
    from,
    to,
    days,
    total_requests: days.reduce((n, d) => n + d.requests, 0),
    total_credits: days.reduce((n, d) => n + d.credits, 0),
  };
}

const toCount = (raw: string | null): number => {
  const n = raw === null ? 0 : Number(raw);
  return Number.isFinite(n) && n > 0 ? n : 0;
};

/**
 * Request counts from the durable daily request log (document store), credits from the
 * KeyValueStore counters (the billing ledger is their record of truth when wired).
 */
export function createCounterUsageReader(deps: {
  kv: KeyValueStore;
  requests: DailyRequestLog;
}): UsageReader {
  const { kv, requests: log } = deps;
  return {
    async getUsage({ accountId, from, to }) {
      const days = await Promise.all(
        datesBetween(from, to).map(async (date): Promise<DayUsage> => {
          const operations = emptyOperations();
          const counted = await log.day(accountId, date);
          await Promise.all(
            METERED_OPERATIONS.map(async (op) => {
              const credits = await kv.get(usageCreditsKey(accountId, date, op));
              operations[op] = { requests: Math.max(0, counted.ops[op] ?? 0), credits: toCount(credits) };
            }),
          );
          const values = Object.values(operations);
          return {
            date,
            requests: values.reduce((n, o) => n + o.requests, 0),
            credits: values.reduce((n, o) => n + o.credits, 0),
            operations,
          };
        }),
      );
      return assemble(accountId, from, to, days);
    },
  };
}

/** Adapts billing's GetUsage (a promisified gRPC call) to UsageReader; missing days become zeros. */
export function createBillingUsageReader(
  getUsage: (request: billingV1.GetUsageRequest) => Promise<billingV1.GetUsageResponse>,
): UsageReader {
  return {
    async getUsage({ accountId, from, to }) {
      const response = await getUsage({ accountId, fromDate: from, toDate: to });
      const byDate = new Map(response.days.map((d) => [d.date, d]));
      const days = datesBetween(from, to).map((date): DayUsage => {
        const day = byDate.get(date);
        const operations = emptyOperations();
        for (const op of day?.operations ?? []) {
          if ((METERED_OPERATIONS as readonly string[]).includes(op.operation)) {
            operations[op.operation as Operation] = {
              requests: Number(op.requests),
              credits: Number(op.credits),
            };
          }
        }
        return { date, requests: Number(day?.requests ?? 0), credits: Number(day?.credits ?? 0), operations };
      });
      return assemble(accountId, from, to, days);
    },
  };
}
