/**
 * The one logger factory: pino, JSON lines to stdout, `service` and `pid` on every line, the active
 * trace/span id on every line written inside a span, and secret-looking fields censored wherever
 * they appear (top level or up to three objects deep: `req.headers.authorization`, `err.config.apiKey`).
 */
import { trace } from '@opentelemetry/api';
import { pino } from 'pino';
import type { DestinationStream, Logger as PinoLogger, LoggerOptions } from 'pino';

/**
 * pino's own logger, for where more than logging is needed (`child`, `isLevelEnabled`, `fatal`, a
 * fastify `loggerInstance`); whatever only logs takes `Logger` from `@subx/ports`.
 */
export type { PinoLogger };

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/** Field names whose values are never written to logs, whatever object they are in. */
export const SECRET_FIELD_NAMES: readonly string[] = [
  'authorization',
  'Authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'X-API-Key',
  'x-admin-token',
  'apiKey',
  'api_key',
  'password',
  'passwd',
  'secret',
  'token',
  'accessToken',
  'access_token',
  'refreshToken',
  'refresh_token',
  'ADMIN_TOKEN',
  'OPENAI_API_KEY',
  'API_KEY_PEPPER',
  'pepper',
];

function pathsFor(name: string): string[] {
  const key = /^[A-Za-z_$][\w$]*$/.test(name) ? name : `["${name}"]`;
  const join = (prefix: string) => (key.startsWith('[') ? `${prefix}${key}` : `${prefix}.${key}`);
  return [key, join('*'), join('*.*'), join('*.*.*')];
}

export const REDACT_PATHS: readonly string[] = SECRET_FIELD_NAMES.flatMap(pathsFor);

export interface CreateLoggerOptions {
  service: string;
  /** Default 'info'. Services pass their config's LOG_LEVEL. */
  level?: LogLevel | string;
  /** More field names to censor (same depth rules as the built-in ones). */
  redactFields?: readonly string[];
  /** Where to write; default stdout. Tests pass a stream to read the lines back. */
  destination?: DestinationStream;
}

/** Trace correlation for the line being written; empty when no span is active. */
export function traceFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const ctx = span.spanContext();
  if (!trace.isSpanContextValid(ctx)) return {};
  return { trace_id: ctx.traceId, span_id: ctx.spanId, trace_flags: `0${ctx.traceFlags.toString(16)}` };
}

export function createLogger(options: CreateLoggerOptions): PinoLogger {
  const loggerOptions: LoggerOptions = {
    level: options.level ?? 'info',
    base: { service: options.service, pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    messageKey: 'msg',
    redact: {
      paths: [...REDACT_PATHS, ...(options.redactFields ?? []).flatMap(pathsFor)],
      censor: '[redacted]',
    },
    serializers: { err: serializeError, error: serializeError, cause: serializeError },
    mixin: traceFields,
  };
  return options.destination ? pino(loggerOptions, options.destination) : pino(loggerOptions);
}

const ERROR_FIELDS = [
  'code',
  'reason',
  'status',
  'statusCode',
  'retryAfterSeconds',
  'errno',
  'syscall',
  'address',
  'port',
] as const;
const MAX_CAUSE_DEPTH = 5;

/**
 * A JSON-safe copy of `value`: cycles become "[circular]", bigints strings, functions and symbols
 * are dropped, depth and array length are bounded. Error details can hold anything (a gRPC
 * ServiceError's metadata, a driver's connection object) and must never make a log line
 * unwritable.
 */
function jsonSafe(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (
    value === null ||
    typeof value === 'string' ||
    typeof value === 'number' ||
    typeof value === 'boolean'
  ) {
    return value;
  }
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object') return undefined;
  if (value instanceof Error) return serializeError(value);
  if (seen.has(value)) return '[circular]';
  if (depth >= 4) return '[object]';
  seen.add(value);
  if (Array.isArray(value)) return value.slice(0, 20).map((v) => jsonSafe(v, depth + 1, seen));
  if (Buffer.isBuffer(value)) return `[${value.length} bytes]`;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value).slice(0, 50)) {
    const safe = jsonSafe(v, depth + 1, seen);
    if (safe !== undefined) out[key] = safe;
  }
  return out;
}

/**
 * Errors as log fields: type, message, code (and the other fields that say what failed), stack,
 * `details` made JSON-safe, and the `cause` chain (AppError wraps the ServiceError or driver error
 * that caused it) and an AggregateError's `errors`, each serialized the same way. pino's standard
 * serializer copies every enumerable property, so one circular field (a gRPC ServiceError's
 * metadata, a socket) turned the whole error into "[unable to serialize]".
 */
export function serializeError(value: unknown, depth = 0): unknown {
  if (!(value instanceof Error)) return jsonSafe(value, 0, new WeakSet());
  const err = value as Error & Record<string, unknown>;
  const out: Record<string, unknown> = { type: err.name || err.constructor.name, message: err.message };
  for (const field of ERROR_FIELDS) {
    const v = jsonSafe(err[field], 3, new WeakSet());
    if (v !== undefined) out[field] = v;
  }
  if (err.details !== undefined) out.details = jsonSafe(err.details, 1, new WeakSet());
  out.stack = err.stack;
  if (err.cause !== undefined) {
    out.cause = depth < MAX_CAUSE_DEPTH ? serializeError(err.cause, depth + 1) : '[cause chain too deep]';
  }
  if (value instanceof AggregateError && depth < MAX_CAUSE_DEPTH) {
    out.errors = (value.errors as unknown[]).slice(0, 10).map((e) => serializeError(e, depth + 1));
  }
  return out;
}

/** `logger.child({ request_id })`, named so call sites read the same everywhere. */
export function withRequestId(logger: PinoLogger, requestId: string): PinoLogger {
  return logger.child({ request_id: requestId });
}
