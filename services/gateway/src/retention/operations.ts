/**
 * The workspace's data retention (docs/api.md, "Data retention"): how long its jobs' results and
 * chunks and its watches' history are kept, within its tier's caps. Account-only routes; reading
 * needs `account:read`, changing `keys:admin` (what governs the account's data, like its keys).
 * Spread into OPERATION_SPECS (openapi/operations.ts), under the Account tag.
 */
import { retentionSettingsSchema, updateRetentionBodySchema } from '@subx/contracts/retention';
import { findOperation, withRequestId } from '../domain/operation-spec.ts';
import type { OperationSpec } from '../domain/operation-spec.ts';

const FREE = 'none; not counted against the daily limit';
const settingsResponse = withRequestId(retentionSettingsSchema);

export const RETENTION_OPERATIONS: OperationSpec[] = [
  {
    method: 'GET',
    path: '/api/v1/account/retention',
    operationId: 'getAccountRetention',
    summary: 'How long the account keeps its data',
    description:
      'The days a finished job’s results are kept (`job_results_days`), its chunks served (`chunks_days`) and a watch remembers a video (`watch_history_days`); null where the default applies. With the most days the tier may choose (`caps`). Free, not counted against the daily limit.',
    auth: 'account',
    scope: 'account:read',
    credits: FREE,
    tag: 'Account',
    response: settingsResponse,
    errors: ['UNAUTHORIZED', 'RATE_LIMITED', 'SERVICE_UNAVAILABLE'],
  },
  {
    method: 'PATCH',
    path: '/api/v1/account/retention',
    operationId: 'updateAccountRetention',
    summary: 'Change how long the account keeps its data',
    description:
      'Sets the fields sent (a number of days, 1 to the tier’s cap; null: back to the default) and leaves the others; answers the whole settings. A value past the cap is 400 INVALID_REQUEST naming the field and the cap (`details.field`, `details.max`). Lowering a setting applies to what is already stored: data older than the new setting is deleted within minutes; raising one brings nothing back. Recorded in the audit log (`retention.changed`). Needs the `keys:admin` scope. Free, not counted against the daily limit.',
    auth: 'account',
    scope: 'keys:admin',
    credits: FREE,
    tag: 'Account',
    body: updateRetentionBodySchema,
    response: settingsResponse,
    errors: ['UNAUTHORIZED', 'RATE_LIMITED', 'INVALID_REQUEST', 'SERVICE_UNAVAILABLE'],
  },
];

/** The row of one of this wing's operations. */
export function retentionOperation(id: string): OperationSpec {
  return findOperation(RETENTION_OPERATIONS, id);
}
