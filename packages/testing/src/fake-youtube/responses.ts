/** Answer helpers shared by the fake's routes. */
import type { LoadedResponse } from './fixtures.ts';

export const JSON_TYPE = 'application/json; charset=UTF-8';

export const json = (value: unknown, status = 200): LoadedResponse => ({
  status,
  contentType: JSON_TYPE,
  body: JSON.stringify(value),
});

/** The platform's `$fields` mask: only the named top-level keys are kept. */
export function applyFieldMask(body: string, fields: string | undefined): string {
  if (!fields) return body;
  const keep = new Set(fields.split(',').map((f) => f.split(/[.(/]/)[0]?.trim()));
  const obj = JSON.parse(body) as Record<string, unknown>;
  return JSON.stringify(Object.fromEntries(Object.entries(obj).filter(([k]) => keep.has(k))));
}
