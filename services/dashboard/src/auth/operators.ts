/**
 * The operator role; the operator pages are routes/operators.ts, the step-up
 * routes/reauth.ts and the promotion API routes/admin-operators.ts:
 * - the role needs a confirmed address, whichever way it is given (OPERATOR_EMAILS or the stored
 *   flag set through the promotion API), so an unconfirmed sign-up for an operator's address gets
 *   nothing;
 * - operator pages and actions need the password entered within OPERATOR_REAUTH_MS (sign-in counts;
 *   afterwards /reauth asks again, throttled like sign-in);
 * - every grant and every operator action is an audit event (audit.ts).
 */
import type { AuditLog } from './audit.ts';
import type { DashboardConfig } from '../config.ts';
import type { UserDoc } from './users.ts';

export interface OperatorPolicy {
  isOperator(user: UserDoc): boolean;
  /** Audits a role that comes from OPERATOR_EMAILS, each time a confirmed account gets it. */
  noteConfiguredGrant(user: UserDoc, how: 'sign-in' | 'confirmation'): void;
}

export function createOperatorPolicy(config: DashboardConfig, audit: AuditLog): OperatorPolicy {
  const configured = new Set(config.OPERATOR_EMAILS.map((e) => e.toLowerCase()));
  return {
    isOperator: (user) => user.email_verified && (user.operator || configured.has(user.email)),
    noteConfiguredGrant(user, how) {
      if (!user.email_verified || !configured.has(user.email)) return;
      audit('operator.granted', {
        actor: { config: 'OPERATOR_EMAILS' },
        target: { email: user.email, user_id: user._id },
        details: { via: how },
      });
    },
  };
}
