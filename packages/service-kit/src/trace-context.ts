/**
 * Trace-context helpers over @opentelemetry/api only (no SDK): they work, as no-ops, in tests and
 * tools that never start telemetry.
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Attributes, Context, Span } from '@opentelemetry/api';
import { isAppError } from '@subx/errors';

const TRACER = 'subx';

/** Writes `traceparent` (and `tracestate`/`baggage` when present) for `ctx` into `headers`. */
export function injectTraceContext(
  headers: Record<string, string> = {},
  ctx: Context = context.active(),
): Record<string, string> {
  propagation.inject(ctx, headers);
  return headers;
}

type HeaderValue = string | Buffer | readonly (string | Buffer)[] | undefined;

/** Reads trace context from HTTP-style or Kafka headers (Buffer values are fine). */
export function extractTraceContext(
  headers: Readonly<Record<string, HeaderValue>>,
  base: Context = ROOT_CONTEXT,
): Context {
  return propagation.extract(base, headers, {
    keys: (carrier) => Object.keys(carrier),
    get: (carrier, key) => {
      const value = carrier[key] ?? carrier[key.toLowerCase()];
      if (value === undefined) return undefined;
      if (Array.isArray(value)) return value.map((v: string | Buffer) => v.toString());
      return value.toString();
    },
  });
}

/** The W3C `traceparent` of `ctx`, for event envelopes' `trace_parent`; undefined outside a trace. */
export function currentTraceParent(ctx: Context = context.active()): string | undefined {
  return injectTraceContext({}, ctx).traceparent;
}

/** Context continuing the trace of an envelope's `trace_parent` (ROOT when absent or invalid). */
export function contextFromTraceParent(traceParent: string | undefined): Context {
  return traceParent ? extractTraceContext({ traceparent: traceParent }) : ROOT_CONTEXT;
}

export interface WithSpanOptions {
  kind?: SpanKind;
  /** Parent context, e.g. from `contextFromTraceParent(envelope.trace_parent)`. Default: active. */
  parent?: Context;
}

/**
 * Runs `fn` in a new active span and ends it. Failures are recorded on the span; caller errors
 * (AppErrors with a 4xx status) do not mark it as an error.
 */
export async function withSpan<T>(
  name: string,
  fn: (span: Span) => T | Promise<T>,
  attributes?: Attributes,
  options: WithSpanOptions = {},
): Promise<T> {
  const tracer = trace.getTracer(TRACER);
  const parent = options.parent ?? context.active();
  return tracer.startActiveSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, ...(attributes ? { attributes } : {}) },
    parent,
    async (span) => {
      try {
        return await fn(span);
      } catch (err) {
        const callerError = isAppError(err) && err.status < 500;
        if (isAppError(err)) span.setAttribute('app.error_code', err.code);
        if (!callerError) {
          span.recordException(err instanceof Error ? err : String(err));
          span.setStatus({ code: SpanStatusCode.ERROR, message: isAppError(err) ? err.code : 'error' });
        }
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

export { SpanKind } from '@opentelemetry/api';
