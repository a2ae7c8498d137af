/**
 * The one logger factory: pino, JSON lines to stdout, `service` and `pid` on every line, the active
 * trace/span id on every line written inside a span, and secret-looking fields censored wherever
 * they appear (top level or up to three objects deep: `req.headers.authorization`, `err.config.apiKey`).
 */
import { trace } from '@opentelemetry/api';
import { pino } from 'pino';
import type { DestinationStream, Logger, LoggerOptions } from 'pino';

export type { Logger } from 'pino';

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

export function createLogger(options: CreateLoggerOptions): Logger {
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
    serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
    mixin: traceFields,
  };
  return options.destination ? pino(loggerOptions, options.destination) : pino(loggerOptions);
}

/** `logger.child({ request_id })`, named so call sites read the same everywhere. */
export function withRequestId(logger: Logger, requestId: string): Logger {
  return logger.child({ request_id: requestId });
}
