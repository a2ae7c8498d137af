/**
 * The audit log's row of the operation table (openapi/operations.ts spreads it in): the account's
 * own events, account-only (free, not counted against the daily limit).
 */
import { auditPageSchema, auditQuerySchema } from '@subx/contracts/audit';
import { findOperation, withRequestId } from '../domain/operation-spec.ts';
import type { OperationSpec } from '../domain/operation-spec.ts';

/** The page the admin API answers too, plus the request's id like every public success body. */
const auditPageResponse = withRequestId(auditPageSchema);

export const AUDIT_OPERATIONS: OperationSpec[] = [
  {
    method: 'GET',
    path: '/api/v1/audit',
    operationId: 'listAuditEvents',
    summary: 'The account’s audit log, newest first',
    description:
      'Who changed what on the account and which calls were refused: keys created, regenerated and revoked, calls refused for their scope or their network, the webhook secret rotated, watches created, deleted and resumed, changes by an operator, sign-ins to the dashboard (failed ones too) and password resets. Pages of `limit` events (1 to 200, default 50), newest first; pass `next_cursor` back as `cursor`. Events are kept 365 days (the operator may set another retention). Needs the `keys:admin` scope. Not counted against the daily limit.',
    auth: 'account',
    scope: 'keys:admin',
    credits: 'none; not counted against the daily limit',
    querystring: auditQuerySchema,
    tag: 'Account',
    response: auditPageResponse,
    errors: ['UNAUTHORIZED', 'INVALID_REQUEST', 'SERVICE_UNAVAILABLE'],
  },
];

/** The row of one of this wing's operations. */
export function auditOperation(id: string): OperationSpec {
  return findOperation(AUDIT_OPERATIONS, id);
}
