/**
 * Text formats on paths of their own (docs/api.md "Formats"): `POST /api/v1/extract.srt` answers
 * only `text/srt`, and so on, so a generated client knows from the operation alone that it reads
 * text. One operation whose media type depends on a body field (`format`) is something SDK
 * generators do not follow; `format` in the JSON operation's body keeps working for existing
 * callers, and the reference documents it there as `json` only.
 */
import { DOCUMENT_FORMATS } from '@subx/public-api';
import type { OperationSpec } from '../domain/operation-spec.ts';
import type { DocumentFormat, JsonSchema } from '@subx/public-api';

const LABELS: Record<DocumentFormat, string> = {
  srt: 'an SRT document',
  vtt: 'a WebVTT document',
  txt: 'plain text',
  md: 'Markdown',
};

const capitalized = (s: string) => `${s[0]!.toUpperCase()}${s.slice(1)}`;

/** The JSON operation's body without `format`: the path says it. */
function documentBody(spec: OperationSpec): JsonSchema {
  const { format: _format, ...properties } = (spec.body?.properties ?? {}) as Record<string, unknown>;
  return { ...spec.body, properties };
}

function documentOperation(spec: OperationSpec, format: DocumentFormat, body: JsonSchema): OperationSpec {
  const { documentPaths: _paths, documentFormats: _formats, ...rest } = spec;
  return {
    ...rest,
    path: `${spec.path}.${format}`,
    operationId: `${spec.operationId}${capitalized(format)}`,
    summary: `${spec.summary} as ${LABELS[format]}`,
    description: `${spec.operationId}'s result as ${LABELS[format]}: the same request body without \`format\`, the same errors, the same price. Equivalent to \`format: "${format}"\` on ${spec.path}.`,
    body,
    response: { type: 'string', description: `The ${format} document.` },
    document: format,
  };
}

/** The table with each `documentPaths` row followed by its per-format rows. */
export function withDocumentPaths(specs: OperationSpec[]): OperationSpec[] {
  return specs.flatMap((spec) => {
    if (!spec.documentPaths) return [spec];
    const body = documentBody(spec);
    return [spec, ...DOCUMENT_FORMATS.map((format) => documentOperation(spec, format, body))];
  });
}
