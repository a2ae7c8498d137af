/**
 * The vocabulary of the public API's JSON schemas: the document formats, and the names under which
 * the OpenAPI builder hoists shared schemas into `components.schemas`.
 */
/** The output formats that are documents rather than JSON. */
export const DOCUMENT_FORMATS = ['srt', 'vtt', 'txt', 'md'] as const;
export type DocumentFormat = (typeof DOCUMENT_FORMATS)[number];

export type JsonSchema = Record<string, unknown>;

/**
 * Names of shared schemas: the OpenAPI builder hoists a named object into `components.schemas` and
 * refers to it by `$ref`, so generated SDKs get types such as `ExtractResult` instead of
 * `ExtractResponse200`. Kept beside the objects rather than in them, so fastify/ajv validate
 * exactly the object they did before.
 */
const SCHEMA_NAMES = new WeakMap<object, string>();

export function named<T extends object>(name: string, schema: T): T {
  const known = SCHEMA_NAMES.get(schema);
  if (known !== undefined && known !== name) throw new Error(`schema named twice: ${known}, ${name}`);
  SCHEMA_NAMES.set(schema, name);
  return schema;
}

export function schemaName(schema: object): string | undefined {
  return SCHEMA_NAMES.get(schema);
}
