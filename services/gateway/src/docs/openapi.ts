/**
 * The OpenAPI 3.1 document, assembled from the same operation table (and the same JSON Schema
 * objects) that fastify validates requests with. Assembled here rather than with @fastify/swagger,
 * whose generator targets 3.0 (nullable, no type arrays) and would rewrite our schemas.
 */
import { ERROR_CATALOG, docsUrl } from '@subx/errors';
import type { ErrorCode } from '@subx/errors';
import { CONTENT_TYPES } from '@subx/formats';
import { errorBodySchema, rateLimitSchema } from '../schemas/common.ts';
import { OPERATIONS, healthResponseSchema } from '../schemas/operations.ts';
import type { JsonSchema, OperationSpec } from '../schemas/operations.ts';

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> };

const header = (description: string, schema: JsonSchema = { type: 'string' }) => ({ description, schema });

const REQUEST_ID_HEADER = header('The request id (also in error bodies); send your own with X-Request-Id.');
const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': header('Requests allowed per UTC day (absent for unlimited tiers).', {
    type: 'integer',
  }),
  'X-RateLimit-Remaining': header('Requests left today (absent for unlimited tiers).', { type: 'integer' }),
  'X-RateLimit-Reset': header('Next reset, ISO 8601 (00:00 UTC).', { type: 'string', format: 'date-time' }),
};

function queryParameters(schema: JsonSchema | undefined) {
  if (!schema) return [];
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return { name, in: 'query', required: required.has(name), description, schema: rest };
  });
}

/** `authenticated`: every response but a 401 carries the key's rate-limit headers (decisions.md). */
function errorResponses(codes: readonly string[], authenticated = false) {
  const byStatus = new Map<number, string[]>();
  for (const code of [...codes, 'INTERNAL_ERROR'] as ErrorCode[]) {
    const status = ERROR_CATALOG[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, list]) => [
        String(status),
        {
          description: list.map((c) => `${c} (${docsUrl(c as ErrorCode)})`).join(', '),
          headers: {
            ...(status === 429 ? { 'Retry-After': header('Seconds to wait.', { type: 'integer' }) } : {}),
            'X-Request-Id': REQUEST_ID_HEADER,
            ...(authenticated && status !== 401 ? RATE_LIMIT_HEADERS : {}),
          },
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        },
      ]),
  );
}

function operationObject(spec: OperationSpec) {
  const content: Record<string, unknown> = { 'application/json': { schema: spec.response } };
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
    description: `${spec.description}\n\nCredits: ${spec.credits}.${spec.tier ? ' Requires the Pro tier or higher.' : ''}`,
    tags: [spec.auth ? 'Subtitles and analysis' : 'Open'],
    security: spec.auth ? [{ ApiKey: [] }] : [],
    parameters: [
      ...queryParameters(spec.querystring),
      ...(spec.auth
        ? [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              description: 'Retrying with the same key replays the first response and never charges twice.',
              schema: { type: 'string', maxLength: 255 },
            },
          ]
        : []),
    ],
    ...(spec.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: spec.body } } } }
      : {}),
    responses: {
      '200': {
        description: 'Success.',
        headers: spec.auth
          ? { 'X-Request-Id': REQUEST_ID_HEADER, ...RATE_LIMIT_HEADERS }
          : { 'X-Request-Id': REQUEST_ID_HEADER },
        content,
      },
      ...errorResponses(spec.errors, spec.auth !== null),
    },
  };
}

export function buildOpenApi(version: string): OpenApiDocument {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const spec of OPERATIONS) {
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
        content: { 'application/json': { schema: healthResponseSchema } },
      },
      '503': { description: 'down', content: { 'application/json': { schema: healthResponseSchema } } },
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
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Subtitle Extraction API',
      version,
      description:
        'Subtitles, comments and AI analyses of videos. Authenticate with the X-API-Key header. Every error has the body `{ error: { code, message, docs_url, request_id, retryable } }`; see /docs/errors.',
    },
    servers: [{ url: '/' }],
    tags: [{ name: 'Subtitles and analysis' }, { name: 'Open' }],
    components: {
      securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
      schemas: { Error: errorBodySchema, RateLimit: rateLimitSchema },
    },
    paths,
  };
}
