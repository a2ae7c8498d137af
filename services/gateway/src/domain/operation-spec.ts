/**
 * The shape of one row of the operation table (openapi/operations.ts), in a module of its own so the
 * wings that contribute rows (jobs/operations.ts, webhooks/operations.ts) need not import the table.
 */
import type { ApiKeyScope } from '@subx/contracts/access';
import type { Operation } from '@subx/credits';
import type { DocumentFormat, JsonSchema } from '@subx/public-api';

export interface OperationSpec {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
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
  /**
   * The API key scope the operation needs (@subx/contracts/access): a key without it is 403
   * INSUFFICIENT_SCOPE. Null exactly for the public routes (auth null).
   */
  scope: ApiKeyScope | null;
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
  /** A second success answer with a status of its own (createJob's 200 estimate of a dry run). */
  alternateSuccess?: { status: 200; description: string; response: JsonSchema };
  /** The success response's media type when it is not JSON (`application/x-ndjson`). */
  mediaType?: string;
  /** Other media types the 200 response can have (non-json formats). */
  documentFormats?: boolean;
  /**
   * The operation also answers each text format on a path of its own (`/api/v1/extract.srt`), one
   * media type per operation, so that generated clients read it as text (document-operations.ts).
   */
  documentPaths?: boolean;
  /** Rows derived by document-operations.ts: the text format this path always answers. */
  document?: DocumentFormat;
  errors: string[];
}

/**
 * Counted against the key's daily limit (auth is an operation, not 'account' and not public):
 * such a request may carry an Idempotency-Key, gets the rate-limit headers, and can meet 409
 * CONFLICT while a request with the same key runs (http/access-hooks.ts).
 */
export function isMetered(spec: Pick<OperationSpec, 'auth'>): boolean {
  return spec.auth !== null && spec.auth !== 'account';
}

/** The row of `specs` with this id: an unknown id is a route wired to nothing, so it throws. */
export function findOperation(specs: readonly OperationSpec[], id: string): OperationSpec {
  const op = specs.find((o) => o.operationId === id);
  if (!op) throw new Error(`unknown operation ${id}`);
  return op;
}

/** A contract's answer schema as a public route answers it: plus the request's id, like every success body. */
export function withRequestId<S extends { required: readonly string[]; properties: object }>(schema: S) {
  return {
    ...schema,
    required: [...schema.required, 'request_id'],
    properties: { ...schema.properties, request_id: { type: 'string' } },
  };
}
