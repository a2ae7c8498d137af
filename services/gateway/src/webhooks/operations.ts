/**
 * The webhook secret operations (services/gateway/src/webhooks/README.md): account-only, in the
 * reference under the Webhooks tag. Spread into OPERATION_SPECS (openapi/operations.ts).
 */
// The same schema as the admin API's webhook secret routes answer with (one definition for both).
import { webhookSecretSchema } from '@subx/contracts/admin-api';
import { findOperation, withRequestId } from '../domain/operation-spec.ts';
import type { OperationSpec } from '../domain/operation-spec.ts';

/** The public routes' answer: the admin API's secret view, plus the request's id like every success body. */
const webhookSecretResponse = withRequestId(webhookSecretSchema);

const ERRORS = ['UNAUTHORIZED', 'INVALID_REQUEST', 'SERVICE_UNAVAILABLE'];

export const WEBHOOK_OPERATIONS: OperationSpec[] = [
  {
    method: 'POST',
    path: '/api/v1/webhooks/secret',
    operationId: 'rotateWebhookSecret',
    summary: 'Rotate the webhook signing secret',
    description:
      'Issues a new Standard Webhooks signing secret (`whsec_…`) for the key’s account: job webhooks are signed with it from now on. The previous secret keeps signing alongside it for 24 hours (`previous_secret_expires_at`; deliveries then carry two signatures in `webhook-signature`), so receivers can switch without missing a delivery. The first call for an account creates its first secret (then `previous_secret_expires_at` is null).',
    auth: 'account',
    scope: 'webhooks:admin',
    credits: 'none; not counted against the daily limit',
    successStatus: 201,
    tag: 'Webhooks',
    response: webhookSecretResponse,
    errors: ERRORS,
  },
  {
    method: 'GET',
    path: '/api/v1/webhooks/secret',
    operationId: 'getWebhookSecret',
    summary: 'The current webhook signing secret',
    description:
      'The secret job webhooks are signed with now (created on the first call if the account has none), and until when the previous one also signs after a rotation.',
    auth: 'account',
    scope: 'webhooks:admin',
    credits: 'none; not counted against the daily limit',
    tag: 'Webhooks',
    response: webhookSecretResponse,
    errors: ERRORS,
  },
];

/** The row of one of this wing's operations. */
export function webhookOperation(id: string): OperationSpec {
  return findOperation(WEBHOOK_OPERATIONS, id);
}
