/**
 * Secrets out of span attributes, for every service: HTTP server and client spans record the URL
 * (`url.query`, `url.full`, `http.target`, `http.url`), and URLs carry one-time tokens
 * (`/reset?token=…`, `/verify?token=…`) or API keys people paste into them (`?api_key=sxk_v1_…`).
 *
 * - the value of every query parameter whose name says secret (token, key, secret, password,
 *   signature, code, session, auth, credential, …) becomes `[redacted]`, in any string attribute
 *   that holds a URL or a query;
 * - anything API-key-shaped (`sxk_v1_…`, percent-encoded too) becomes `sxk_v1_[redacted]` wherever
 *   it appears, whatever the parameter or attribute (a key pasted as `?url=sxk_v1_…`, in a path).
 *
 * Applied when a span ends, before any processor or exporter sees it (telemetry.ts puts the
 * redactor first and wraps the OTLP exporter), to the span's attributes and its events'.
 */
import type { Attributes, AttributeValue } from '@opentelemetry/api';
import type { NodeSDKConfiguration } from '@opentelemetry/sdk-node';

type SpanExporter = NonNullable<NodeSDKConfiguration['traceExporter']>;

// The key prefix, possibly percent-encoded (`sxk%5Fv1%5F`), then whatever follows it.
const KEY_SHAPED = /sxk(?:_|%5f)v1(?:_|%5f)[A-Za-z0-9%]*/gi;
const SECRET_NAME = /token|key|secret|passw|pwd|signature|sig$|^code$|session|auth|credential|otp/i;
// A query parameter: after ?, & or ; (or at the start of a bare query string), name=value. The
// separators and `=` count percent-encoded too (`t=1%3Btoken%3D…`, as some clients escape them).
const SEPARATOR = String.raw`[?&;]|%26|%3[bB]`;
const NAME_CHAR = String.raw`(?:[^=&;#?\s%]|%(?!26|3[bBdD])[0-9a-fA-F]{2})`;
const VALUE_CHAR = String.raw`(?:[^&;#\s%]|%(?!26|3[bB])[0-9a-fA-F]{2})`;
const QUERY_PARAM = new RegExp(`(${SEPARATOR}|^)(${NAME_CHAR}+)(=|%3[dD])(${VALUE_CHAR}*)`, 'g');
/** Attributes that are a query string without the leading `?`. */
const BARE_QUERY_KEYS = new Set(['url.query', 'http.query']);

const REDACTED = '[redacted]';

function decodeName(name: string): string {
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

/** The text with secret-named query values and API-key-shaped strings redacted. */
export function redactUrlSecrets(text: string, bareQuery = false): string {
  let out = text.replace(KEY_SHAPED, 'sxk_v1_[redacted]');
  if (bareQuery || out.includes('?')) {
    const queryStart = bareQuery ? 0 : out.indexOf('?');
    const head = out.slice(0, queryStart);
    const query = out.slice(queryStart);
    out =
      head +
      query.replace(QUERY_PARAM, (whole, sep: string, name: string, equals: string, value: string) =>
        // `^` matches only a bare query's first parameter (a URL's head was cut off above).
        (sep === '' && !bareQuery) || value === '' || !SECRET_NAME.test(decodeName(name))
          ? whole
          : `${sep}${name}${equals}${REDACTED}`,
      );
  }
  return out;
}

function redactValue(key: string, value: AttributeValue | undefined): AttributeValue | undefined {
  if (typeof value === 'string') return redactUrlSecrets(value, BARE_QUERY_KEYS.has(key));
  if (Array.isArray(value)) {
    return value.map((item: unknown) =>
      typeof item === 'string' ? redactUrlSecrets(item) : item,
    ) as AttributeValue;
  }
  return value;
}

/** Redacts in place (span attributes are plain objects until exported). */
export function redactAttributes(attributes: Attributes | undefined): void {
  if (!attributes) return;
  for (const key of Object.keys(attributes)) {
    const value = attributes[key];
    const redacted = redactValue(key, value);
    if (redacted !== value) attributes[key] = redacted;
  }
}

/** The parts of an ended span that can carry a URL. */
export interface RedactableSpan {
  readonly name: string;
  readonly attributes: Attributes;
  readonly events: readonly { attributes?: Attributes }[];
}

export function redactSpan(span: RedactableSpan): void {
  redactAttributes(span.attributes);
  for (const event of span.events) redactAttributes(event.attributes);
  // Span names are routes or methods (`GET /reset`), but a name built from a raw URL must not leak.
  const name = redactUrlSecrets(span.name);
  if (name !== span.name) (span as { name: string }).name = name;
}

/** An exporter (OTLP, behind NodeSDK's own batch processor) that redacts right before export. */
export function redactingExporter(exporter: SpanExporter): SpanExporter {
  return {
    export: (spans, done) => {
      for (const span of spans) redactSpan(span);
      exporter.export(spans, done);
    },
    shutdown: () => exporter.shutdown(),
    ...(exporter.forceFlush ? { forceFlush: () => exporter.forceFlush!() } : {}),
  };
}
