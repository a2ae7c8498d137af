/**
 * `components.schemas` of the OpenAPI document: every named schema object (domain/operation-spec.ts
 * `named`) is hoisted there once and referred to by `$ref`, so SDK generators emit one type per
 * name (`ExtractResult`, `BatchItemSuccess`) shared by every operation that uses it. The objects of
 * the operation table stay as they are (fastify validates with them); this module only names the
 * ones defined inline in a row, through the row, and copies on the way out.
 */
import type { ErrorCode } from '@subx/errors';
import { healthResponseSchema } from '../api/operations.ts';
import { operationById } from './operations.ts';
import { BODY_ERROR_CODES } from '@subx/public-api';
import { jobSchema } from '@subx/public-api';
import { isMetered } from '../domain/operation-spec.ts';
import { named, schemaName } from '@subx/public-api';
import type { OperationSpec } from '../domain/operation-spec.ts';
import type { JsonSchema } from '@subx/public-api';

const properties = (schema: JsonSchema | undefined) =>
  (schema?.properties ?? {}) as Record<string, JsonSchema>;
const itemsOf = (schema: JsonSchema | undefined) => schema?.items as JsonSchema;

/**
 * Names for the results of the operation table and the objects inline in them. Request bodies stay
 * inline in their operation: openapi-typescript makes a property with a `default` required in a
 * component schema (right for responses), but optional in a request body, as a caller expects.
 */
function nameTableSchemas(): void {
  const result = (id: string) => operationById(id).response;
  named('ExtractResult', result('extract'));
  named('BatchResult', result('batch'));
  named('PlaylistResult', result('playlist'));
  named('PlaylistInfo', properties(result('playlist')).playlist!);
  named('ValidateResult', result('validate'));
  named('AvailableLanguages', properties(result('validate')).available_languages!);
  named('SummarizeResult', result('summarize'));
  named('SummaryVideoMetadata', properties(result('summarize')).video_metadata!);
  named('SummaryTimestamp', itemsOf(properties(result('summarize')).timestamps));
  named('CommentsResult', result('comments'));
  named('Comment', itemsOf(properties(result('comments')).comments));
  named('CommentAnalysis', result('analyzeComments'));
  named('KeyQuote', itemsOf(properties(result('analyzeComments')).key_quotes));
  named('ApiKeyList', result('listKeys'));
  named('ApiKey', itemsOf(properties(result('listKeys')).keys));
  named('CreatedApiKey', result('createKey'));
  named('RevokedApiKey', result('revokeKey'));
  const source = properties(operationById('createJob').body).source!;
  named('JobSource', source);
  for (const member of source.oneOf as JsonSchema[]) {
    named(`JobSource${String(member.title)[0]!.toUpperCase()}${String(member.title).slice(1)}`, member);
  }
  named('Job', jobSchema);
  named('JobSourceSummary', properties(jobSchema).source!);
  named('JobProgress', properties(jobSchema).progress!);
  named('JobError', properties(jobSchema).error!);
  named('JobWebhook', properties(jobSchema).webhook!);
  named('WebhookAttempt', itemsOf(properties(properties(jobSchema).webhook).attempts));
  named('JobList', result('listJobs'));
  named('JobResultsPage', result('getJobResults'));
  named('WebhookSecret', result('getWebhookSecret'));
  named('Account', result('getAccount'));
  named('AccountOperations', properties(result('getAccount')).operations!);
  named('OperationAccess', properties(properties(result('getAccount')).operations).extract!);
  named('AccountJobLimits', properties(result('getAccount')).jobs!);
  named('AuditPage', result('listAuditEvents'));
  const auditEvent = itemsOf(properties(result('listAuditEvents')).events);
  named('AuditEvent', auditEvent);
  named('AuditActor', properties(auditEvent).actor!);
  named('AuditTarget', properties(auditEvent).target!);
  named('AuditDetails', properties(auditEvent).details!);
  named('RetentionSettings', result('getAccountRetention'));
  named('RetentionCaps', properties(result('getAccountRetention')).caps!);
  named('Health', healthResponseSchema);
  named('ServiceStatuses', properties(healthResponseSchema).services!);
}
nameTableSchemas();

const jsonBodies = new WeakMap<OperationSpec, JsonSchema>();

/**
 * The request body as documented. An operation with per-format paths documents `format` as `json`
 * only (the default): its 200 is JSON, the documents have their own paths. Other values are still
 * accepted for existing callers and answer the document, as they always did.
 */
export function documentedBody(spec: OperationSpec): JsonSchema | undefined {
  if (!spec.body || !spec.documentPaths) return spec.body;
  let body = jsonBodies.get(spec);
  if (!body) {
    const format = properties(spec.body).format!;
    body = {
      ...spec.body,
      properties: {
        ...properties(spec.body),
        format: {
          ...format,
          enum: ['json'],
          description: `\`json\` (the default). For a document, use the path of its format: ${spec.path}.srt, .vtt, .txt or .md.`,
        },
      },
    };
    jsonBodies.set(spec, body);
  }
  return body;
}

/**
 * A copy of `value` in which every named schema object is `{ $ref }` to its entry in `schemas`
 * (added on first sight; a second object under a taken name is a programming error).
 */
export function hoistSchemas(value: unknown, schemas: Record<string, unknown>): unknown {
  const seen = new Map<string, object>();
  const walk = (v: unknown, top: boolean): unknown => {
    if (Array.isArray(v)) return v.map((item) => walk(item, false));
    if (v === null || typeof v !== 'object') return v;
    const name = top ? undefined : schemaName(v);
    if (name !== undefined) {
      const prior = seen.get(name);
      if (prior !== undefined && prior !== v) throw new Error(`two different schemas are named ${name}`);
      if (prior === undefined) {
        seen.set(name, v);
        schemas[name] = walk(v, true);
      }
      return { $ref: `#/components/schemas/${name}` };
    }
    return Object.fromEntries(Object.entries(v).map(([key, item]) => [key, walk(item, false)]));
  };
  return walk(value, false);
}

/**
 * Every error an operation can answer: its own list, plus what the HTTP layer answers for any
 * operation of its kind — 409 CONFLICT while a request with the same Idempotency-Key runs (counted
 * operations, http/access-hooks.ts), 413 and 415 for a body (http/errors.ts), 503 when a store or
 * service it needs is down.
 */
export function documentedErrors(spec: OperationSpec): ErrorCode[] {
  const metered = isMetered(spec);
  return [
    ...new Set([
      ...(spec.errors as ErrorCode[]),
      ...(metered ? (['CONFLICT'] as const) : []),
      // Any key may be a named key with scopes and source networks (@subx/contracts/access).
      ...(spec.scope ? (['INSUFFICIENT_SCOPE', 'SOURCE_NOT_ALLOWED'] as const) : []),
      ...(spec.body ? BODY_ERROR_CODES : []),
      'SERVICE_UNAVAILABLE' as const,
    ]),
  ];
}
