/**
 * The shape of one row of the operation table (schemas/operations.ts), in a module of its own so the
 * files that contribute rows (job-operations.ts, webhooks.ts) need not import the table itself.
 */
import type { Operation } from '../access/types.ts';

export type JsonSchema = Record<string, unknown>;

export interface OperationSpec {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  operationId: string;
  summary: string;
  description: string;
  /**
   * The access-control operation (authenticated, tier-checked and counted against the daily
   * limit), `'account'` for routes that only need to know whose key it is (reading a job, rotating
   * the webhook secret: not counted, free), or null for the unauthenticated routes.
   */
  auth: Operation | 'account' | null;
  tier?: 'pro';
  credits: string;
  body?: JsonSchema;
  querystring?: JsonSchema;
  /** Path parameters (`/api/v1/jobs/:job_id`), validated like the query. */
  params?: JsonSchema;
  /** The success status when it is not 200 (202 Accepted for a job, 201 for a new secret). */
  successStatus?: 201 | 202;
  /** Group in the reference; default by `auth`. */
  tag?: string;
  response: JsonSchema;
  /** Other media types the 200 response can have (non-json formats). */
  documentFormats?: boolean;
  errors: string[];
}
