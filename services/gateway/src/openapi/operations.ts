/**
 * The whole public operation table, assembled from every wing's rows in the order the reference
 * lists them: one table from which /openapi.json, llms.txt, the MCP tools and the validation of
 * every route are built. The one module that imports every wing's operations; a wing's routes
 * read only their own rows.
 */
import { ACCOUNT_OPERATIONS } from '../api/account-operations.ts';
import { AUDIT_OPERATIONS } from '../audit/operations.ts';
import { V1_OPERATIONS } from '../api/operations.ts';
import { findOperation } from '../domain/operation-spec.ts';
import type { OperationSpec } from '../domain/operation-spec.ts';
import { JOB_OPERATIONS } from '../jobs/operations.ts';
import { WATCH_OPERATIONS } from '../watches/operations.ts';
import { WEBHOOK_OPERATIONS } from '../webhooks/operations.ts';
import { KEY_OPERATIONS } from '../keys/operations.ts';
import { EXPORT_OPERATIONS } from '../export/operations.ts';
import { RETENTION_OPERATIONS } from '../retention/operations.ts';

/** The HTTP operation table: one entry per public route, driving validation, routes, OpenAPI and llms.txt. */
export const OPERATION_SPECS: OperationSpec[] = [
  // Extraction, its documents, comments, summaries and discovery (api/operations.ts).
  ...V1_OPERATIONS,
  ...JOB_OPERATIONS,
  ...WATCH_OPERATIONS,
  // Account settings: the webhook signing secret (webhooks/operations.ts).
  ...WEBHOOK_OPERATIONS,
  // The calling key's tier, balance and limits (api/account-operations.ts).
  ...ACCOUNT_OPERATIONS,
  // The account's API keys and their scopes (keys/operations.ts).
  ...KEY_OPERATIONS,
  // Who changed what on the account (audit/operations.ts).
  ...AUDIT_OPERATIONS,
  // All of the account's data, for its owner (export/operations.ts).
  ...EXPORT_OPERATIONS,
  // How long the account keeps its data (retention/operations.ts).
  ...RETENTION_OPERATIONS,
];

export function operationById(id: string): OperationSpec {
  return findOperation(OPERATION_SPECS, id);
}
