/**
 * Form bodies: a JSON schema per form (the route's `schema.body`) and the matching type. Every
 * field is an optional string: a missing field reads as '' and the handler answers with the page
 * that says what is wrong (the same answer as an empty field); a field that is not one string (sent
 * twice, or a JSON object) is a 400 before the handler runs. The cap bounds what a handler reads
 * (the whole body is also capped at 16 KiB).
 */
export const FIELD_MAX_LENGTH = 4096;

type Form<K extends string> = Partial<Record<K, string>>;

export function formSchema<const K extends string>(...fields: K[]) {
  return {
    type: 'object',
    properties: Object.fromEntries(
      ['_csrf', ...fields].map((name) => [name, { type: 'string', maxLength: FIELD_MAX_LENGTH }]),
    ),
  } as const;
}

/** A form field, '' when absent. */
export function field<K extends string>(body: unknown, name: K): string {
  return (body as Form<K> | undefined)?.[name] ?? '';
}
