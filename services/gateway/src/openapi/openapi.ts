/**
 * The OpenAPI 3.1 document, assembled from the same operation table (and the same JSON Schema
 * objects) that fastify validates requests with. Assembled here rather than with @fastify/swagger,
 * whose generator targets 3.0 (nullable, no type arrays) and would rewrite our schemas.
 */
import { ERROR_CATALOG, docsUrl } from '@subx/errors';
import type { ErrorCode } from '@subx/errors';
import { CONTENT_TYPES } from '@subx/formats';
import { errorBodySchema, rateLimitSchema } from '@subx/public-api';
import { isMetered } from '../domain/operation-spec.ts';
import { healthResponseSchema } from '../api/operations.ts';
import { OPERATION_SPECS } from './operations.ts';
import { documentedBody, documentedErrors, hoistSchemas } from './components.ts';
import { REQUEST_EXAMPLES } from './examples.ts';
import type { OperationSpec } from '../domain/operation-spec.ts';
import type { JsonSchema } from '@subx/public-api';

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> };

const header = (description: string, schema: JsonSchema = { type: 'string' }) => ({ description, schema });

/**
 * Response headers, documented once under `components.headers` and referenced by every response
 * that carries them (the reference renders them per response).
 */
const HEADERS = {
  'X-Request-Id': header(
    'The request id, also `error.request_id` of error bodies. Send your own (8–128 of `A-Z a-z 0-9 . _ : -`) and it is kept.',
  ),
  'X-RateLimit-Limit': header(
    "Requests the key's tier allows per UTC day. Absent for unlimited tiers and on 401.",
    { type: 'integer' },
  ),
  'X-RateLimit-Remaining': header('Requests left today. Absent for unlimited tiers and on 401.', {
    type: 'integer',
  }),
  'X-RateLimit-Reset': header('When the daily count resets: the next 00:00 UTC, ISO 8601.', {
    type: 'string',
    format: 'date-time',
  }),
  'Retry-After': header('Seconds to wait before retrying.', { type: 'integer' }),
  'X-Credits-Remaining': header(
    'The balance this call left: present when the call was charged (`credits_used` or `credits_charged` above 0), absent otherwise.',
    { type: 'integer' },
  ),
  'WWW-Authenticate': header('The challenge of every 401: `Bearer realm="subx"`.'),
  Location: header('Where to follow the accepted work, e.g. `/api/v1/jobs/{job_id}`.'),
  'Idempotent-Replayed': header(
    '`true` when this response is the stored answer to an earlier request with the same `Idempotency-Key` (nothing was run or charged again).',
    { type: 'string', enum: ['true'] },
  ),
};
type HeaderName = keyof typeof HEADERS;

const headerRefs = (names: HeaderName[]) =>
  Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));

const RATE_LIMIT_HEADER_NAMES: HeaderName[] = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
];

const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes retries safe (send a fresh value, e.g. a new UUID, per logical request and the same one on its retries): a completed request retried with the same key (same account, method, path and body) gets the first response replayed for 24 h with `Idempotent-Replayed: true`, and is never charged twice. While the first is still running a retry is 409 `CONFLICT`; the same key with a different request is 400 `INVALID_REQUEST`; a failed request frees the key. 1–255 visible ASCII characters, e.g. a UUID.',
  // No example: the reference's code samples would carry it, and a copied sample run twice with a
  // changed body gets 400 for reusing the key. Samples leave it out; docs/clients.md shows one
  // generated per request.
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
};

/** One example error body per code, so the reference shows each code's body and docs link. */
export function errorExamples(codes: ErrorCode[]) {
  return Object.fromEntries(
    codes.map((code) => [
      code,
      {
        summary: code,
        value: {
          error: {
            code,
            message: ERROR_CATALOG[code].summary.replaceAll('`', ''),
            docs_url: docsUrl(code),
            request_id: 'req_6f1d0c2e-5b7a-4f43-9c1e-0a8b2d4e6f10',
            retryable: ERROR_CATALOG[code].retryable,
          },
        },
      },
    ]),
  );
}

/** A Markdown list: each code linked to its /docs/errors anchor, with the catalogue's summary. */
export const errorList = (codes: ErrorCode[]) =>
  codes.map((c) => `- [\`${c}\`](${docsUrl(c)}): ${ERROR_CATALOG[c].summary}`).join('\n');

export function pathParameters(schema: JsonSchema | undefined) {
  if (!schema) return [];
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return { name, in: 'path', required: true, description, schema: rest };
  });
}

export function queryParameters(schema: JsonSchema | undefined) {
  if (!schema) return [];
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return { name, in: 'query', required: required.has(name), description, schema: rest };
  });
}

/**
 * One response per status, listing every code the operation can answer with that status (with a
 * link to its /docs/errors anchor) and an example body per code. `authenticated`: every response
 * but a 401 carries the key's rate-limit headers (docs/decisions.md
 * "Rate-limit reporting").
 */
/** The codes grouped by their HTTP status (the catalogue's), statuses ascending, each code once. */
export function codesByStatus(codes: Iterable<ErrorCode>): [number, ErrorCode[]][] {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = ERROR_CATALOG[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return [...byStatus.entries()].sort(([a], [b]) => a - b);
}

function errorResponses(codes: readonly string[], authenticated = false) {
  return Object.fromEntries(
    codesByStatus([...codes, 'INTERNAL_ERROR'] as ErrorCode[]).map(([status, list]) => [
      String(status),
      {
        description: errorList(list),
        headers: headerRefs([
          ...(status === 429 || status === 503 ? (['Retry-After'] as const) : []),
          ...(status === 401 ? (['WWW-Authenticate'] as const) : []),
          'X-Request-Id',
          ...(authenticated && status !== 401 ? RATE_LIMIT_HEADER_NAMES : []),
        ]),
        content: {
          'application/json': {
            schema: { $ref: '#/components/schemas/Error' },
            examples: errorExamples(list),
          },
        },
      },
    ]),
  );
}

const SUCCESS_DESCRIPTIONS = {
  200: 'Success.',
  201: 'Created.',
  202: 'Accepted: the work continues in the background; `Location` names where to follow it.',
};

function operationObject(spec: OperationSpec) {
  // Counted operations carry the daily limit's headers and take an Idempotency-Key; the
  // account-only reads (auth 'account') do neither.
  const metered = isMetered(spec);
  const example = REQUEST_EXAMPLES[spec.operationId];
  const content: Record<string, unknown> = spec.document
    ? { [CONTENT_TYPES[spec.document].split(';')[0]!]: { schema: spec.response } }
    : { [spec.mediaType ?? 'application/json']: { schema: spec.response } };
  if (spec.documentFormats) {
    for (const format of ['srt', 'vtt', 'txt', 'md'] as const) {
      content[CONTENT_TYPES[format].split(';')[0]!] = {
        schema: { type: 'string', description: `The ${format} document (format=${format}).` },
      };
    }
  }
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    description: `${spec.description}\n\nCredits: ${spec.credits}.${spec.tier ? ' Requires the Pro tier or higher.' : ''}${spec.scope ? ` API key scope: \`${spec.scope}\`.` : ''}`,
    ...(spec.scope ? { 'x-required-scope': spec.scope } : {}),
    tags: [spec.tag ?? (spec.auth ? 'Subtitles and analysis' : 'Open')],
    // Either header carries the key (alternatives, not both).
    security: spec.auth ? [{ ApiKey: [] }, { Bearer: [] }] : [],
    parameters: [
      ...pathParameters(spec.params),
      ...queryParameters(spec.querystring).map((p) =>
        example?.query?.[p.name] === undefined ? p : { ...p, example: example.query[p.name] },
      ),
      ...(metered ? [IDEMPOTENCY_KEY_PARAMETER] : []),
    ],
    ...(spec.body
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: documentedBody(spec),
                ...(example?.body ? { examples: example.body } : {}),
              },
            },
          },
        }
      : {}),
    responses: {
      [String(spec.successStatus ?? 200)]: {
        description: SUCCESS_DESCRIPTIONS[spec.successStatus ?? 200],
        headers: headerRefs([
          'X-Request-Id',
          ...(metered
            ? [...RATE_LIMIT_HEADER_NAMES, 'X-Credits-Remaining' as const, 'Idempotent-Replayed' as const]
            : []),
          ...(spec.successStatus === 202 ? ['Location' as const] : []),
        ]),
        content,
      },
      ...(spec.alternateSuccess
        ? {
            [String(spec.alternateSuccess.status)]: {
              description: spec.alternateSuccess.description,
              headers: headerRefs([
                'X-Request-Id',
                ...(metered
                  ? [
                      ...RATE_LIMIT_HEADER_NAMES,
                      'X-Credits-Remaining' as const,
                      'Idempotent-Replayed' as const,
                    ]
                  : []),
              ]),
              content: { 'application/json': { schema: spec.alternateSuccess.response } },
            },
          }
        : {}),
      ...errorResponses(documentedErrors(spec), metered),
    },
  };
}

export function buildOpenApi(version: string): OpenApiDocument {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of OPERATION_SPECS) {
    paths[spec.path] = { ...(paths[spec.path] ?? {}), [spec.method.toLowerCase()]: operationObject(spec) };
  }
  const health = {
    operationId: 'health',
    summary: 'Service status and version',
    description:
      'No authentication and never rate limited (probes poll it); HEAD answers the same status without a body. `status` is `down` (HTTP 503) when the extractor is unreachable or its check fails, `degraded` when another service is, else `ok`; `services` names each failing dependency. Always 200 or 503, never 500.',
    tags: ['Open'],
    security: [],
    responses: {
      '200': {
        description: 'ok or degraded',
        headers: headerRefs(['X-Request-Id']),
        content: { 'application/json': { schema: healthResponseSchema } },
      },
      '503': {
        description: 'down',
        headers: headerRefs(['X-Request-Id']),
        content: { 'application/json': { schema: healthResponseSchema } },
      },
    },
  };
  const head = (operationId: string) => ({
    operationId,
    summary: 'Service status for probes (no body)',
    description:
      'The status of GET without a body: 200 when ok or degraded, 503 when down. Never rate limited.',
    tags: ['Open'],
    security: [],
    responses: { '200': { description: 'ok or degraded' }, '503': { description: 'down' } },
  });
  paths['/health'] = { get: health, head: head('healthHead') };
  paths['/api/v1/health'] = { get: { ...health, operationId: 'healthV1' }, head: head('healthV1Head') };
  const schemas: Record<string, unknown> = {};
  // Error and RateLimit first: every error response refers to Error by name.
  const hoisted = hoistSchemas({ seed: [errorBodySchema, rateLimitSchema], paths }, schemas) as {
    paths: OpenApiDocument['paths'];
  };
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Subtitle Extraction API',
      version,
      description:
        'Subtitles, comments and AI analyses of videos. Authenticate with the API key in the X-API-Key header, or as `Authorization: Bearer <key>`. AI agents: the same operations are tools of the MCP server at /mcp (Streamable HTTP, same key); /llms.txt describes both. Every error has the body `{ error: { code, message, docs_url, request_id, retryable } }`; see /docs/errors.',
    },
    servers: [{ url: '/' }],
    // Every tag an operation uses, in table order (a tag missing here is grouped last by viewers).
    tags: [
      ...new Set([
        'Subtitles and analysis',
        ...OPERATION_SPECS.flatMap((o) => (o.tag ? [o.tag] : [])),
        'Open',
      ]),
    ].map((name) => ({ name })),
    components: {
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        Bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'The same API key (`sxk_v1_` + 32 letters and digits) as `Authorization: Bearer <key>`.',
        },
      },
      schemas,
      headers: HEADERS,
    },
    paths: hoisted.paths,
  };
}
