/**
 * Reading the OpenAPI document in tests: its schemas refer to `components.schemas` by `$ref`;
 * `inlined` resolves those so a plain ajv can validate a body against the documented schema.
 */
type Doc = { components: { schemas: Record<string, unknown> } };

const PREFIX = '#/components/schemas/';

/** `schema` with every `#/components/schemas/...` reference replaced by the schema it names. */
export function inlined(doc: Doc, schema: unknown, depth = 0): unknown {
  if (depth > 32) throw new Error('reference cycle in components.schemas');
  if (Array.isArray(schema)) return schema.map((item) => inlined(doc, item, depth));
  if (schema === null || typeof schema !== 'object') return schema;
  const ref = (schema as { $ref?: unknown }).$ref;
  if (typeof ref === 'string' && ref.startsWith(PREFIX)) {
    const target = doc.components.schemas[ref.slice(PREFIX.length)];
    if (target === undefined) throw new Error(`unresolved ${ref}`);
    return inlined(doc, target, depth + 1);
  }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, inlined(doc, value, depth)]));
}
