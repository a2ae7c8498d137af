import { billingV1 } from '@subx/contracts';
import { Errors } from '@subx/errors';
import { defineService } from '@subx/service-kit';
import type { ServiceRegistration } from '@subx/service-kit';
import type { UsageReports } from '../ledger/usage-report.ts';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const MAX_RANGE_DAYS = 366;

/** gRPC ↔ ledger mapping for subx.billing.v1.BillingService. */
export function billingServiceRegistration(reports: UsageReports): ServiceRegistration {
  return defineService(billingV1.BillingServiceService, {
    getUsage: async (req) => {
      if (!req.accountId) throw Errors.invalidRequest('account_id is required');
      if (
        !DAY.test(req.fromDate) ||
        !DAY.test(req.toDate) ||
        Number.isNaN(Date.parse(req.fromDate)) ||
        Number.isNaN(Date.parse(req.toDate))
      ) {
        throw Errors.invalidRequest('from_date and to_date must be dates as YYYY-MM-DD');
      }
      const span = (Date.parse(req.toDate) - Date.parse(req.fromDate)) / 86_400_000;
      if (span < 0) throw Errors.invalidRequest('from_date must not be after to_date');
      if (span >= MAX_RANGE_DAYS)
        throw Errors.invalidRequest(`the range may span at most ${MAX_RANGE_DAYS} days`);
      const report = await reports.usage(req.accountId, req.fromDate, req.toDate);
      return {
        accountId: report.accountId,
        days: report.days.map((d) => ({
          date: d.date,
          requests: BigInt(d.requests),
          credits: BigInt(d.credits),
          operations: d.operations.map((o) => ({
            operation: o.operation,
            requests: BigInt(o.requests),
            credits: BigInt(o.credits),
          })),
        })),
        totalCredits: BigInt(report.totalCredits),
        totalRequests: BigInt(report.totalRequests),
      };
    },
  });
}
