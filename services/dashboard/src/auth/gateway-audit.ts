/**
 * What only the dashboard sees, reported to the account's audit log at the gateway (POST
 * /admin/v1/accounts/{id}/audit, actor `member`): sign-ins, failed sign-ins for an e-mail that
 * belongs to an account, password resets. Reporting never stands in the person's way: the wait is
 * bounded (well under the client's GATEWAY_TIMEOUT_MS) and a failure is logged, never thrown.
 */
import type { MemberAuditAction } from '@subx/contracts/audit';
import type { WorkspaceRole } from '@subx/contracts/workspaces';
import { withTimeout } from '@subx/service-kit';
import type { GatewayClient } from '../gateway/client.ts';

/** How long a sign-in or a reset waits for its report at most. */
export const AUDIT_REPORT_TIMEOUT_MS = 2_000;

export interface MemberEvent {
  action: MemberAuditAction;
  /** The gateway account the person's user belongs to; no account: nothing to report. */
  accountId: string | null;
  /** The dashboard user's id; null when the person is not known to be them (a failed sign-in). */
  memberId: string | null;
  sourceIp: string;
  /** For `member.invited` and `invitation.withdrawn`. */
  invitation?: { id: string; email: string; role: WorkspaceRole };
}

export async function reportMemberEvent(
  gateway: GatewayClient,
  /** The request's logger (its lines carry the request id). */
  logger: { warn(facts: object, message: string): void },
  event: MemberEvent,
  timeoutMs = AUDIT_REPORT_TIMEOUT_MS,
): Promise<void> {
  if (!event.accountId) return;
  const facts = { action: event.action, account_id: event.accountId };
  try {
    await withTimeout(
      () =>
        gateway.recordAudit(event.accountId!, {
          action: event.action,
          member_id: event.memberId,
          source_ip: event.sourceIp,
          ...(event.invitation ? { invitation: event.invitation } : {}),
        }),
      timeoutMs,
      () => logger.warn(facts, `the gateway did not confirm the audit event within ${timeoutMs} ms`),
    );
  } catch (err) {
    logger.warn({ err, ...facts }, 'the audit event could not be reported to the gateway');
  }
}
