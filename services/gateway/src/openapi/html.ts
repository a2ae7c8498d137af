/**
 * /docs/errors: one section per code of the error catalogue, each with the anchor its `docs_url`
 * points at. Plain HTML written here (the OpenAPI reference at /docs is Scalar's): a page of the
 * catalogue, not of the OpenAPI document, with no script at all.
 */
import { ERROR_CATALOG, ERROR_CODES, docsUrl } from '@subx/errors';

const escapeHtml = (s: string) =>
  s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

/** Escaped text with `code spans` rendered as <code>. */
const prose = (s: string) => escapeHtml(s).replace(/`([^`]+)`/g, '<code>$1</code>');

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
code{background:#f3f3f3;padding:0 .2em;border-radius:3px}
h2{margin-top:2.5rem;border-top:1px solid #ddd;padding-top:1rem}`;

function page(title: string, body: string): string {
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>\n${body}\n</body></html>\n`;
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
The <a href="/docs">API reference</a> lists the codes each operation can answer.
Quote the <code>request_id</code> (also in the <code>X-Request-Id</code> header) when reporting a problem.
In batch and playlist results the same codes appear as <code>error_code</code> of failed items.</p>`;
  return page('Error reference', `${intro}\n${rows.join('\n')}`);
}
