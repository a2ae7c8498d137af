/**
 * Request validation with ajv (JSON Schema) and the mapping of its errors into our error body.
 * Bodies are validated without type coercion ("true" is not a boolean, "10" is not a number).
 * Query strings only carry strings, so numbers and booleans are converted first, strictly: a
 * number is plain decimal (`10`, `-1`, `2.5`), never `0x10`, `1e1`, `" 10"` or `""` (ajv's own
 * coercion accepts whatever `Number()` does); a boolean is `true` or `false`. Anything else stays
 * a string and fails the type check. Unknown fields are rejected, never silently dropped.
 */
import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { Errors, plural } from '@subx/errors';
import type { AppError } from '@subx/errors';
import { INCLUDE_FIELDS } from '@subx/public-api';

const shared = { useDefaults: true, removeAdditional: false, allErrors: false, strict: false } as const;
const ajv = new Ajv({ ...shared, coerceTypes: false });

const DECIMAL = /^-?(?:0|[1-9]\d*)(?:\.\d+)?$/;

/** Converts the query's number and boolean parameters in place (see the header comment). */
function convertQuery(schema: Record<string, unknown>, data: unknown): void {
  if (typeof data !== 'object' || data === null) return;
  const properties = (schema.properties ?? {}) as Record<string, { type?: unknown }>;
  const query = data as Record<string, unknown>;
  for (const [name, value] of Object.entries(query)) {
    const type = properties[name]?.type;
    if (typeof value !== 'string') continue;
    if ((type === 'integer' || type === 'number') && DECIMAL.test(value)) query[name] = Number(value);
    else if (type === 'boolean' && (value === 'true' || value === 'false')) query[name] = value === 'true';
  }
}

export function compileValidator(
  schema: Record<string, unknown>,
  httpPart: string | undefined,
): ValidateFunction {
  const validate = ajv.compile(schema);
  if (httpPart === 'body') return validate;
  const wrapped = ((data: unknown) => {
    convertQuery(schema, data);
    const ok = validate(data);
    wrapped.errors = validate.errors;
    return ok;
  }) as ValidateFunction;
  return wrapped;
}

const PART_NAMES: Record<string, string> = {
  body: 'body',
  querystring: 'query',
  params: 'path',
  headers: 'header',
};

function describe(error: ErrorObject, part: string): string {
  const field = error.instancePath
    .split('/')
    .filter(Boolean)
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
    .join('.');
  const where = field ? `${part}.${field}` : part;
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${part}${field ? `.${field}` : ''}.${String(p.missingProperty)} is required`;
    case 'additionalProperties':
      return `${where} has an unknown field '${String(p.additionalProperty)}'`;
    case 'type':
      return `${where} must be ${String(p.type).replace(',', ' or ')}`;
    case 'enum':
      return `${where} must be one of: ${(p.allowedValues as unknown[]).join(', ')}`;
    case 'minimum':
    case 'maximum':
      return `${where} must be ${p.comparison} ${p.limit}`;
    case 'minItems':
      return `${where} must have at least ${plural(Number(p.limit), 'item')}`;
    case 'maxItems':
      return `${where} must have at most ${plural(Number(p.limit), 'item')}`;
    case 'minLength':
      return `${where} must not be empty`;
    case 'maxLength':
      return `${where} must be at most ${plural(Number(p.limit), 'character')}`;
    case 'pattern':
      return `${where} is not in the expected form`;
    default:
      return `${where} ${error.message ?? 'is invalid'}`;
  }
}

/** Names in `values` that are not opt-in metadata fields. */
export function unknownIncludeNames(values: readonly unknown[]): string[] {
  return values.map(String).filter((v) => !(INCLUDE_FIELDS as readonly string[]).includes(v));
}

/**
 * fastify's validation error → INVALID_INCLUDE (an unknown include name; the message lists the
 * nine valid names) or INVALID_REQUEST (everything else, naming the field and the rule).
 */
export function validationToAppError(
  errors: ErrorObject[],
  context: string | undefined,
  input: { body?: unknown; query?: unknown },
): AppError {
  const part = PART_NAMES[context ?? 'body'] ?? 'request';
  // An empty body parses to no body (json-body.ts); a route that needs one says so plainly.
  if (part === 'body' && input.body === undefined) {
    return Errors.invalidRequest('The request body is empty; send a JSON object.');
  }
  const first = errors[0];
  if (first && first.keyword === 'enum' && /^\/include\/\d+$/.test(first.instancePath)) {
    const source = (part === 'body' ? input.body : input.query) as { include?: unknown } | undefined;
    const values = Array.isArray(source?.include) ? source.include : [];
    return Errors.invalidInclude(unknownIncludeNames(values), INCLUDE_FIELDS);
  }
  return Errors.invalidRequest(first ? describe(first, part) : `Invalid ${part}.`);
}
