/**
 * Env-schema helpers and `loadConfig`. Nothing here reads `process.env` at import time: a service's
 * `config.ts` exports its schema and calls `loadConfig(schema)` from `main.ts`, and tests call
 * `loadConfig(schema, { ... })` with a plain object.
 *
 * Env values are strings; the helpers below parse them strictly (no `Number("")` → 0, no
 * `Boolean("false")` → true) and their error messages never echo the value, because a value can be a
 * secret or a URL with a password in it.
 */
import { z } from 'zod';

const INTEGER = /^\d+$/;

/** TCP port 0..65535 (0 = let the OS choose, useful in tests). */
export const port = z
  .string()
  .trim()
  .regex(INTEGER, { error: 'must be an integer port number (0-65535)' })
  .transform(Number)
  .pipe(z.number().int().max(65535, { error: 'must be an integer port number (0-65535)' }));

/**
 * METRICS_PORT: the port of `/metrics` (0 = any free port), or `off` for no metrics endpoint.
 * → number | null.
 */
export const metricsPort = z
  .string()
  .trim()
  .transform((value, ctx) => {
    if (value === 'off') return null;
    if (INTEGER.test(value) && Number(value) <= 65535) return Number(value);
    ctx.addIssue({ code: 'custom', message: 'must be a port number (0-65535) or "off"' });
    return z.NEVER;
  });

/**
 * Bind address of a gRPC server (`GRPC_HOST`): '0.0.0.0' (every interface, containers) by default;
 * '127.0.0.1' keeps a service to the machine, '::' is every IPv6 (and usually IPv4) interface.
 */
export const grpcHost = z
  .string()
  .trim()
  .min(1, { error: 'must be a host or IP address' })
  .default('0.0.0.0');

/** Integer > 0. */
export const positiveInt = z
  .string()
  .trim()
  .regex(INTEGER, { error: 'must be a positive integer' })
  .transform(Number)
  .pipe(z.number().int().positive({ error: 'must be a positive integer' }).max(Number.MAX_SAFE_INTEGER));

/** Integer >= 0. */
export const nonNegativeInt = z
  .string()
  .trim()
  .regex(INTEGER, { error: 'must be a non-negative integer' })
  .transform(Number)
  .pipe(z.number().int().max(Number.MAX_SAFE_INTEGER));

/** Only "true"/"1" are true and only "false"/"0" are false; anything else is an error, not false. */
export const boolEnv = z.string().transform((value, ctx) => {
  const v = value.trim();
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  ctx.addIssue({ code: 'custom', message: 'must be one of true, false, 1, 0' });
  return z.NEVER;
});

/**
 * A comma-separated list whose items each pass `item`: "a:9092, b:9092" → ["a:9092", "b:9092"];
 * blanks are dropped; at least one item. A bad item is reported as `VAR.<index>`.
 */
export function csvOf<T extends z.ZodType<unknown, string>>(item: T) {
  return z
    .string()
    .transform((value) =>
      value
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry.length > 0),
    )
    .pipe(z.array(item).min(1, { error: 'must be a comma-separated list with at least one item' }));
}

/** "a:9092, b:9092" → ["a:9092", "b:9092"]; blanks are dropped; at least one item. */
export const csv = csvOf(z.string());

/** An absolute http:// or https:// URL, kept as a string. */
export const httpUrl = z
  .string()
  .trim()
  .refine((value) => URL.canParse(value) && ['http:', 'https:'].includes(new URL(value).protocol), {
    error: 'must be an http(s) URL',
  });

/** An absolute URL, kept as a string (drivers want strings). */
export const urlString = urlStringOf();

/** An absolute URL whose protocol is one of `protocols` (with the colon: 'redis:', 'mongodb:'). */
export function urlStringOf(protocols?: readonly string[]) {
  return z
    .string()
    .trim()
    .superRefine((value, ctx) => {
      if (!URL.canParse(value)) {
        ctx.addIssue({ code: 'custom', message: 'must be an absolute URL' });
        return;
      }
      if (protocols && !protocols.includes(new URL(value).protocol)) {
        ctx.addIssue({ code: 'custom', message: `must be a URL with protocol ${protocols.join(' or ')}` });
      }
    });
}

const DURATION = /^(\d+)\s*(ms|s|m|h|d)?$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function parseDurationMs(value: string): number {
  const match = DURATION.exec(value.trim());
  return match ? Number(match[1]) * (UNIT_MS[match[2] ?? 'ms'] ?? 1) : Number.NaN;
}

/** Positive duration in milliseconds: "1500" (ms), "1500ms", "10s", "2m", "1h", "7d" → number of ms. */
export const durationMs = z.string().transform((value, ctx) => {
  const ms = parseDurationMs(value);
  if (!Number.isSafeInteger(ms) || ms <= 0) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be a positive duration in ms, or with a unit: 500ms, 10s, 2m, 1h, 7d',
    });
    return z.NEVER;
  }
  return ms;
});

/** A duration like `durationMs` within [minMs, maxMs] (0 allowed when minMs is 0: "never"/"off"). */
export function durationMsBetween(minMs: number, maxMs: number) {
  return z.string().transform((value, ctx) => {
    const ms = parseDurationMs(value);
    if (!Number.isSafeInteger(ms) || ms < minMs || ms > maxMs) {
      ctx.addIssue({
        code: 'custom',
        message: `must be a duration between ${minMs} and ${maxMs} ms (a number of ms, or 500ms, 10s, 2m, 1h, 7d)`,
      });
      return z.NEVER;
    }
    return ms;
  });
}

/** `LOG_LEVEL` values (pino's levels). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** LOG_LEVEL: one of pino's levels (default `info`). */
export const logLevel = z
  .enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` })
  .default('info');

/** SHUTDOWN_TIMEOUT_MS: the graceful-stop deadline, a duration like every other (default 10 s). */
export const shutdownTimeoutMs = durationMs.default(10_000);

/**
 * STARTUP_DEPENDENCY_TIMEOUT_MS: how long a service waits at start for its Kafka, MongoDB and Redis
 * to answer before it exits (default 60 s; dependencies.ts). Keep it inside the startup probe's
 * budget (the chart: periodSeconds x failureThreshold).
 */
export const startupDependencyTimeoutMs = durationMsBetween(1_000, 3_600_000).default(60_000);

/**
 * What every service reads the same way: spread into each service's schema, so `LOG_LEVEL=loud`
 * or `SHUTDOWN_TIMEOUT_MS=10s` means the same to all of them.
 */
export const serviceBasicsEnv = {
  LOG_LEVEL: logLevel,
  SHUTDOWN_TIMEOUT_MS: shutdownTimeoutMs,
  STARTUP_DEPENDENCY_TIMEOUT_MS: startupDependencyTimeoutMs,
};

/** A name (Kafka topic, consumer group, client id, model): trimmed, not blank. */
export const nameString = z.string().trim().min(1, { error: 'must not be blank' });

/** A peer's gRPC address, `host:port` (or any grpc-js target such as `dns:///host:port`). */
export const grpcAddress = z
  .string()
  .trim()
  .regex(/^\S+:\d{1,5}$/, { error: 'must be a host:port address' });

/**
 * An integer between `min` and `max` (inclusive); for tunables with a sensible range, so a typo
 * (an extra zero) is refused instead of taken.
 */
export function intBetween(min: number, max: number) {
  const error = `must be an integer between ${min} and ${max}`;
  return z
    .string()
    .trim()
    .regex(INTEGER, { error })
    .transform(Number)
    .pipe(z.number().int().min(min, { error }).max(max, { error }));
}

/** A decimal number between `min` and `max` (inclusive), e.g. a ratio 0-1. */
export function numberBetween(min: number, max: number) {
  const error = `must be a number between ${min} and ${max}`;
  return z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?$|^\.\d+$/, { error })
    .transform(Number)
    .pipe(z.number().min(min, { error }).max(max, { error }));
}

/**
 * A JSON value checked by `schema`: "must be JSON" when it does not parse, else the schema's own
 * issues, each under the variable's name and the path inside the value (`ACCESS_PRICING_JSON.tiers.pro`).
 */
export function jsonOf<T extends z.ZodType>(schema: T) {
  return z
    .string()
    .transform((value, ctx) => {
      try {
        return JSON.parse(value) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON' });
        return z.NEVER;
      }
    })
    .pipe(schema);
}

const secretRegistry = z.registry<{ secret: true }>();

/**
 * Marks a key as secret: `loadConfig` never puts its value in an error message and
 * `redactConfig` hides it. Wrappers added afterwards (`.optional()`, `.default()`) keep the mark.
 */
export function secret<T extends z.ZodType = z.ZodString>(schema?: T): T {
  const s = (schema ?? z.string().min(1, { error: 'must not be empty' })) as T;
  secretRegistry.add(s, { secret: true });
  return s;
}

function isSecretSchema(schema: z.ZodType): boolean {
  let current: unknown = schema;
  // Walk through wrappers (optional, default, nullable, pipe) to the schema that carries the mark.
  for (let depth = 0; depth < 10 && current; depth++) {
    const s = current as z.ZodType;
    if (secretRegistry.get(s)?.secret) return true;
    const def = s._zod.def as { innerType?: unknown; in?: unknown };
    current = def.innerType ?? def.in;
  }
  return false;
}

/** Keys of an object schema marked with `secret()`. */
export function secretKeysOf(schema: z.ZodType): string[] {
  if (!(schema instanceof z.ZodObject)) return [];
  const shape = schema.shape as Record<string, z.ZodType>;
  return Object.keys(shape).filter((key) => isSecretSchema(shape[key] as z.ZodType));
}

export interface ConfigIssue {
  /** The env variable, or "(config)" for a cross-field rule without a path. */
  readonly key: string;
  readonly message: string;
}

export class ConfigError extends Error {
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[]) {
    const lines = issues.map((issue) => `  - ${issue.key}: ${issue.message}`);
    const only = issues.length === 1 ? issues[0] : undefined;
    // One problem is one line (what a person reads in a crash-looping pod's last log line).
    super(
      only
        ? `Invalid configuration: ${only.key}: ${only.message}`
        : `Invalid configuration (${issues.length} problems):\n${lines.join('\n')}`,
    );
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

export interface LoadConfigOptions {
  /** Extra secret keys, on top of those marked with `secret()`. */
  secrets?: readonly string[];
}

function issueMessage(issue: z.core.$ZodIssue, raw: unknown): string {
  if (raw === undefined && issue.code === 'invalid_type') return 'is required';
  return issue.message;
}

/**
 * Parses `env` with `schema`. Empty strings count as unset, so `FOO=` falls back to FOO's default
 * (or is reported as required) instead of being parsed as "".
 * Throws one ConfigError listing every bad variable.
 */
export function loadConfig<S extends z.ZodType>(
  schema: S,
  env: Record<string, string | undefined> = process.env,
  options: LoadConfigOptions = {},
): z.output<S> {
  const input: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value !== undefined && value !== '') input[key] = value;
  }
  const result = schema.safeParse(input);
  if (result.success) return result.data;

  const secretKeys = new Set([...secretKeysOf(schema), ...(options.secrets ?? [])]);
  const secretValues = [...secretKeys]
    .map((key) => input[key])
    .filter((value): value is string => value !== undefined && value.length >= 4);
  const issues = result.error.issues.map((issue) => {
    const key = issue.path.length > 0 ? issue.path.map(String).join('.') : '(config)';
    let message = issueMessage(issue, input[String(issue.path[0])]);
    // Defence in depth: a custom refinement could interpolate a value into its message.
    for (const value of secretValues) message = message.split(value).join('[redacted]');
    return { key, message };
  });
  throw new ConfigError(issues);
}

export const REDACTED = '[redacted]';

// scheme://user:password@host → scheme://user:[redacted]@host
const URL_PASSWORD = /^([a-z][a-z0-9+.-]*:\/\/[^/:@\s]*):[^@/\s]+@/i;

/**
 * A copy of `config` that is safe to log: secret keys that are set become "[redacted]" (unset ones
 * stay undefined, which is useful to see), and passwords inside URL strings are redacted too.
 */
export function redactConfig<T extends Record<string, unknown>>(
  config: T,
  secretKeys: readonly string[],
): Record<keyof T, unknown> {
  const secrets = new Set(secretKeys);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    if (secrets.has(key)) out[key] = value === undefined || value === null ? value : REDACTED;
    else if (typeof value === 'string') out[key] = value.replace(URL_PASSWORD, `$1:${REDACTED}@`);
    else if (typeof value === 'bigint') out[key] = value.toString();
    else out[key] = value;
  }
  return out as Record<keyof T, unknown>;
}
