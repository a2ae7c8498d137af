import type { RequestCounts } from './request-counts.ts';
import type { DayUsage, UsageLedger, UsageReport } from './usage-ledger.ts';

export interface UsageReports {
  /**
   * Per-day usage by operation: requests from the request counts (billing.request-usage.v1: every
   * request the gateways admitted, charged or not), credits from the ledger (billing.credit-usage.v1).
   * A day appears when it has either.
   */
  usage(accountId: string, fromDay: string, toDay: string): Promise<UsageReport>;
}

export function createUsageReports(ledger: UsageLedger, requests: RequestCounts): UsageReports {
  return {
    async usage(accountId, fromDay, toDay) {
      const [charged, counted] = await Promise.all([
        ledger.usage(accountId, fromDay, toDay),
        requests.days(accountId, fromDay, toDay),
      ]);
      const creditsByDay = new Map(charged.days.map((d) => [d.date, d]));
      const dates = [...new Set([...creditsByDay.keys(), ...counted.keys()])].sort();
      const days = dates.map((date): DayUsage => {
        const credits = new Map(
          (creditsByDay.get(date)?.operations ?? []).map((o) => [o.operation, o.credits]),
        );
        const requests = counted.get(date) ?? new Map<string, number>();
        const operations = [...new Set([...credits.keys(), ...requests.keys()])].sort().map((operation) => ({
          operation,
          requests: requests.get(operation) ?? 0,
          credits: credits.get(operation) ?? 0,
        }));
        return {
          date,
          requests: operations.reduce((s, o) => s + o.requests, 0),
          credits: operations.reduce((s, o) => s + o.credits, 0),
          operations,
        };
      });
      return {
        accountId,
        days,
        totalRequests: days.reduce((s, d) => s + d.requests, 0),
        totalCredits: days.reduce((s, d) => s + d.credits, 0),
      };
    },
  };
}
