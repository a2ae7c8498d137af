/**
 * The account's API keys (src/keys/README.md): list, make and revoke named keys with scopes.
 * Account-only routes needing the `keys:admin` scope; spread into OPERATION_SPECS
 * (openapi/operations.ts), under the Keys tag.
 */
import {
  apiKeyInfoSchema,
  apiKeyListSchema,
  createApiKeyBodySchema,
  createdApiKeySchema,
  keyIdParamsSchema,
} from '@subx/contracts/access';
import { findOperation, withRequestId } from '../domain/operation-spec.ts';
import type { OperationSpec } from '../domain/operation-spec.ts';

const FREE = 'none; not counted against the daily limit';

export const KEY_OPERATIONS: OperationSpec[] = [
  {
    method: 'GET',
    path: '/api/v1/keys',
    operationId: 'listKeys',
    summary: "The account's API keys",
    description:
      'Every key of the account: the primary key (made by sign-up or the admin API; every scope), then the named keys by creation, revoked and expired ones included. Never the keys themselves: their prefix and last four characters, scopes, expiry, allowed networks and last use (to the minute).',
    auth: 'account',
    scope: 'keys:admin',
    credits: FREE,
    tag: 'Keys',
    response: withRequestId(apiKeyListSchema),
    errors: ['UNAUTHORIZED', 'RATE_LIMITED'],
  },
  {
    method: 'POST',
    path: '/api/v1/keys',
    operationId: 'createKey',
    summary: 'Make a named API key with scopes',
    description:
      'A new key of the account with the scopes named, an optional expiry and optional allowed source networks. The key itself is in `api_key`, in this response only (`Cache-Control: no-store`). A key can only make keys with scopes it has itself (403 INSUFFICIENT_SCOPE otherwise); an account holds at most 50 active named keys (400 INVALID_REQUEST past that).',
    auth: 'account',
    scope: 'keys:admin',
    credits: FREE,
    successStatus: 201,
    tag: 'Keys',
    body: createApiKeyBodySchema,
    response: withRequestId(createdApiKeySchema),
    errors: ['UNAUTHORIZED', 'RATE_LIMITED', 'INVALID_REQUEST'],
  },
  {
    method: 'DELETE',
    path: '/api/v1/keys/{key_id}',
    operationId: 'revokeKey',
    summary: 'Revoke a named API key',
    description:
      'The key stops working on every replica before this answers (401 UNAUTHORIZED from then on); revoking it again answers the same. The primary key is replaced or revoked from the dashboard or the admin API (400 INVALID_REQUEST here).',
    auth: 'account',
    scope: 'keys:admin',
    credits: FREE,
    tag: 'Keys',
    params: keyIdParamsSchema,
    response: withRequestId(apiKeyInfoSchema),
    errors: ['UNAUTHORIZED', 'RATE_LIMITED', 'INVALID_REQUEST', 'NOT_FOUND'],
  },
];

/** The row of one of this wing's operations. */
export function keyOperation(id: string): OperationSpec {
  return findOperation(KEY_OPERATIONS, id);
}
