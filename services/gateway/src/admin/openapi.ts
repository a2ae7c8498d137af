/**
 * The admin listener's OpenAPI 3.1 document (GET /openapi.json on ADMIN_HOST:ADMIN_PORT), built
 * from the admin operation table (admin/operations.ts) with the public document's helpers
 * for parameters and error responses, so both describe errors alike.
 */
import type { ErrorCode } from '@subx/errors';
import { errorBodySchema } from '@subx/public-api';
import { ADMIN_OPERATION_SPECS } from './operations.ts';
import type { AdminOperationSpec } from './operations.ts';
import {
  codesByStatus,
  errorExamples,
  errorList,
  pathParameters,
  queryParameters,
} from '../openapi/openapi.ts';
import type { OpenApiDocument } from '../openapi/openapi.ts';

/** Every admin route can answer these: a wrong token, too many wrong tokens, a failure of ours. */
const ALWAYS: ErrorCode[] = ['UNAUTHORIZED', 'RATE_LIMITED', 'INTERNAL_ERROR'];

const header = (description: string, schema: Record<string, unknown> = { type: 'string' }) => ({
  description,
  schema,
});
const HEADERS = {
  'X-Request-Id': header('The request id, also `error.request_id` of error bodies.'),
  'Retry-After': header('Seconds to wait before trying a token again.', { type: 'integer' }),
  'WWW-Authenticate': header('The challenge of every 401: `Bearer`.'),
  'Cache-Control': header("`no-store`: the body holds a key, a secret or the workspace's data."),
};
const ref = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });

function errorResponses(codes: readonly ErrorCode[]) {
  return Object.fromEntries(
    codesByStatus([...codes, ...ALWAYS]).map(([status, list]) => [
      String(status),
      {
        description: errorList(list),
        headers: {
          'X-Request-Id': ref('X-Request-Id'),
          ...(status === 401 ? { 'WWW-Authenticate': ref('WWW-Authenticate') } : {}),
          ...(status === 429 ? { 'Retry-After': ref('Retry-After') } : {}),
        },
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

const SUCCESS = { 200: 'Success.', 201: 'Created.', 204: 'Done; no body.' };

function operationObject(spec: AdminOperationSpec) {
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    description: spec.description,
    tags: [spec.tag],
    security: [{ AdminToken: [] }],
    parameters: [...pathParameters(spec.params), ...queryParameters(spec.querystring)],
    ...(spec.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: spec.body } } } }
      : {}),
    responses: {
      [String(spec.successStatus)]: {
        description: SUCCESS[spec.successStatus],
        headers: {
          'X-Request-Id': ref('X-Request-Id'),
          ...(spec.noStore ? { 'Cache-Control': ref('Cache-Control') } : {}),
        },
        ...(spec.response
          ? { content: { [spec.mediaType ?? 'application/json']: { schema: spec.response } } }
          : {}),
      },
      ...errorResponses(spec.errors),
    },
  };
}

export function buildAdminOpenApi(version: string): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const spec of ADMIN_OPERATION_SPECS) {
    paths[spec.path] = {
      ...(paths[spec.path] ?? {}),
      [spec.method.toLowerCase()]: operationObject(spec),
    };
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Subtitle Extraction admin API',
      version,
      description:
        "Accounts, keys, usage and the dashboard's self-service calls, on the gateway's admin listener (ADMIN_HOST:ADMIN_PORT; never the public port). Every operation needs `Authorization: Bearer <ADMIN_TOKEN>`; after a few wrong tokens from one address it answers 429 with `Retry-After`. A request that fails its schema is 400 `INVALID_REQUEST` naming the field. Every error has the body `{ error: { code, message, docs_url, request_id, retryable } }`.",
    },
    servers: [{ url: '/' }],
    tags: [
      { name: 'Accounts', description: 'Accounts, keys and usage (operators and the dashboard).' },
      {
        name: 'Self-service',
        description: "What the dashboard shows and does for a signed-in account's owner.",
      },
    ],
    components: {
      securitySchemes: {
        AdminToken: {
          type: 'http',
          scheme: 'bearer',
          description:
            "The gateway's ADMIN_TOKEN, as `Authorization: Bearer <ADMIN_TOKEN>` (the scheme name in any case).",
        },
      },
      schemas: { Error: errorBodySchema },
      headers: HEADERS,
    },
    paths,
  };
}
