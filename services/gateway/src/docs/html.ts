/** /docs and /docs/errors: plain HTML generated from the OpenAPI document and the error catalogue. */
import { ERROR_CATALOG, ERROR_CODES, docsUrl } from '@subx/errors';
import type { OpenApiDocument } from './openapi.ts';

const escapeHtml = (s: string) =>
  s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

/** Escaped text with `code spans` rendered as <code>. */
const prose = (s: string) => escapeHtml(s).replace(/`([^`]+)`/g, '<code>$1</code>');

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
code{background:#f3f3f3;padding:0 .2em;border-radius:3px}table{border-collapse:collapse;margin:.5rem 0 1rem}
td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}
h2{margin-top:2.5rem;border-top:1px solid #ddd;padding-top:1rem}.m{font-family:monospace;font-weight:bold}`;

function page(title: string, body: string): string {
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>\n${body}\n</body></html>\n`;
}

type Schema = Record<string, unknown>;

function typeOf(schema: Schema): string {
  const t = schema.type;
  const base = Array.isArray(t) ? t.join(' | ') : String(t ?? 'object');
  if (base === 'array' && schema.items) return `${typeOf(schema.items as Schema)}[]`;
  return base;
}

function rule(schema: Schema): string {
  const parts: string[] = [];
  if (Array.isArray(schema.enum))
    parts.push(`one of ${schema.enum.map((v) => `\`${String(v)}\``).join(', ')}`);
  const items = schema.items as Schema | undefined;
  if (items && Array.isArray(items.enum))
    parts.push(`items: ${items.enum.map((v) => `\`${String(v)}\``).join(', ')}`);
  if (schema.minimum !== undefined || schema.maximum !== undefined)
    parts.push(`${schema.minimum ?? ''}–${schema.maximum ?? ''}`);
  if (schema.minItems !== undefined || schema.maxItems !== undefined)
    parts.push(`${schema.minItems ?? 0}–${schema.maxItems ?? '∞'} items`);
  if (typeof schema.description === 'string') parts.push(schema.description);
  return prose(parts.join('; '));
}

function fieldsTable(rows: { name: string; schema: Schema; required: boolean; where?: string }[]): string {
  if (rows.length === 0) return '<p>None.</p>';
  const head = '<tr><th>Name</th><th>In</th><th>Type</th><th>Required</th><th>Default</th><th>Rule</th></tr>';
  const body = rows
    .map(
      (r) =>
        `<tr><td><code>${escapeHtml(r.name)}</code></td><td>${r.where ?? ''}</td><td>${escapeHtml(typeOf(r.schema))}</td><td>${r.required ? 'yes' : 'no'}</td><td>${
          r.schema.default === undefined ? '' : `<code>${escapeHtml(JSON.stringify(r.schema.default))}</code>`
        }</td><td>${rule(r.schema)}</td></tr>`,
    )
    .join('\n');
  return `<table>${head}\n${body}</table>`;
}

function objectRows(schema: Schema | undefined, where: string) {
  if (!schema) return [];
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries((schema.properties ?? {}) as Record<string, Schema>).map(([name, s]) => ({
    name,
    schema: s,
    required: required.has(name),
    where,
  }));
}

export function renderReference(doc: OpenApiDocument): string {
  const info = doc.info as { title: string; version: string; description: string };
  const sections: string[] = [
    `<h1>${escapeHtml(info.title)} <small>v${escapeHtml(info.version)}</small></h1>`,
    `<p>${prose(info.description)}</p>`,
    '<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1). Errors: <a href="/docs/errors">/docs/errors</a>.</p>',
  ];
  const toc: string[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, raw] of Object.entries(methods)) {
      const op = raw as Schema & { operationId: string; summary: string; description: string };
      toc.push(
        `<li><a href="#${op.operationId}"><span class="m">${method.toUpperCase()}</span> ${escapeHtml(path)}</a> — ${escapeHtml(op.summary)}</li>`,
      );
      const params = (
        (op.parameters ?? []) as {
          name: string;
          in: string;
          required: boolean;
          description?: string;
          schema: Schema;
        }[]
      ).map((p) => ({
        name: p.name,
        where: p.in,
        required: p.required,
        schema: { ...p.schema, description: p.description },
      }));
      const bodySchema = (op.requestBody as { content: Record<string, { schema: Schema }> } | undefined)
        ?.content['application/json']?.schema;
      const responses = op.responses as Record<
        string,
        { description: string; content?: Record<string, { schema: Schema }> }
      >;
      const ok = responses['200']?.content?.['application/json']?.schema;
      const errors = Object.entries(responses)
        .filter(([status]) => status !== '200')
        .map(([status, r]) => `<li>${status}: ${linkCodes(r.description)}</li>`)
        .join('');
      sections.push(
        `<h2 id="${op.operationId}"><span class="m">${method.toUpperCase()}</span> ${escapeHtml(path)}</h2>`,
        `<p><strong>${escapeHtml(op.summary)}</strong></p>`,
        ...op.description.split('\n\n').map((p) => `<p>${prose(p)}</p>`),
        `<p>Authentication: ${(op.security as unknown[]).length > 0 ? '<code>X-API-Key</code> header' : 'none'}.</p>`,
        '<h3>Parameters</h3>',
        fieldsTable([...params, ...objectRows(bodySchema, 'body')]),
        '<h3>Response fields</h3>',
        fieldsTable(objectRows(ok, '').map((r) => ({ ...r, where: '' }))),
        `<h3>Errors</h3><ul>${errors}</ul>`,
      );
    }
  }
  sections.splice(3, 0, `<ul>${toc.join('\n')}</ul>`);
  return page(`${info.title} reference`, sections.join('\n'));
}

function linkCodes(text: string): string {
  return escapeHtml(text).replace(/([A-Z][A-Z_]+) \((\/docs\/errors#[a-z-]+)\)/g, '<a href="$2">$1</a>');
}

export function renderErrorReference(): string {
  const rows = ERROR_CODES.map((code) => {
    const entry = ERROR_CATALOG[code];
    const anchor = docsUrl(code).split('#')[1]!;
    return `<section id="${anchor}"><h2><code>${code}</code></h2><p>HTTP ${entry.status} · retryable: ${entry.retryable ? 'yes' : 'no'}</p><p>${prose(entry.summary)}</p></section>`;
  });
  const intro = `<h1>Error reference</h1>
<p>Every failure has the body <code>{ "error": { "code", "message", "docs_url", "request_id", "retryable" } }</code>,
plus <code>reason</code> for VIDEO_UNAVAILABLE and UPSTREAM_BLOCKED. <code>docs_url</code> links to the section of the code below.
Quote the <code>request_id</code> (also in the <code>X-Request-Id</code> header) when reporting a problem.
In batch and playlist results the same codes appear as <code>error_code</code> of failed items.</p>`;
  return page('Error reference', `${intro}\n${rows.join('\n')}`);
}
