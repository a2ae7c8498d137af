/**
 * Start-up failures a person has to act on, as one readable line each: a busy port names the port
 * and the variable that sets it, and configuration problems from every loader of a service (its
 * own schema, the YouTube client's YOUTUBE_* loader, ...) are listed together, not the first one
 * with a stack trace.
 */
import { ConfigError } from './config.ts';
import type { ConfigIssue } from './config.ts';
import { DependenciesUnreachableError } from './dependencies.ts';
import { SchemaRegistryStartupError } from './net/schema-registry-env.ts';

/** `PORT 8080 is already in use (set PORT to another port)`. */
export class PortInUseError extends Error {
  readonly variable: string;
  readonly port: number;

  constructor(variable: string, port: number, options?: { cause?: unknown }) {
    super(`${variable} ${port} is already in use (set ${variable} to another port)`, options);
    this.name = 'PortInUseError';
    this.variable = variable;
    this.port = port;
  }
}

/** One listener of a process: the variable that sets its port, the port and the address it binds. */
export interface Listener {
  variable: string;
  port: number;
  host: string;
}

/**
 * Several busy ports at once, in one line: `PORT 8080 and METRICS_PORT 9464 are already in use (set
 * PORT and METRICS_PORT to other ports)`; a single one reads as PortInUseError's message.
 */
export class PortsInUseError extends Error {
  readonly busy: readonly Pick<Listener, 'variable' | 'port'>[];

  constructor(busy: readonly Pick<Listener, 'variable' | 'port'>[]) {
    const names = busy.map((b) => `${b.variable} ${b.port}`);
    const variables = busy.map((b) => b.variable);
    super(
      busy.length === 1
        ? `${names[0]} is already in use (set ${variables[0]} to another port)`
        : `${andList(names)} are already in use (set ${andList(variables)} to other ports)`,
    );
    this.name = 'PortsInUseError';
    this.busy = busy;
  }
}

/** `a`, `a and b`, `a, b and c`. */
function andList(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/**
 * `err` as a PortInUseError when it is an "address in use" failure (Node's EADDRINUSE, or grpc-js's
 * bindAsync error, which only carries it in its message); otherwise `err` unchanged.
 */
export function portInUse(err: unknown, variable: string, port: number): unknown {
  const e = err as { code?: unknown; message?: unknown } | null;
  const inUse =
    e?.code === 'EADDRINUSE' || (typeof e?.message === 'string' && e.message.includes('EADDRINUSE'));
  return inUse ? new PortInUseError(variable, port, { cause: err }) : err;
}

// "YOUTUBE_BASE_URL must be ...", "YOUTUBE_CLIENTS.order must be ...": the variable leads.
const LEADING_VARIABLE = /^([A-Z][A-Z0-9_]*(?:\.[\w.-]+)?)\s+(.+)$/s;

/**
 * The problems in a loader's error: a ConfigError's issues, or the `details.errors` sentences of
 * loaders that report with an AppError (packages/youtube's `loadYouTubeConfig` throws one
 * INVALID_REQUEST listing every YOUTUBE_* problem). null when `err` is not a configuration error.
 */
export function configIssuesOf(err: unknown): ConfigIssue[] | null {
  if (err instanceof ConfigError) return [...err.issues];
  const list = (err as { details?: { errors?: unknown } } | null)?.details?.errors;
  if (!Array.isArray(list) || list.length === 0 || !list.every((s) => typeof s === 'string')) return null;
  return (list as string[]).map((sentence) => {
    const m = LEADING_VARIABLE.exec(sentence);
    return m ? { key: m[1] as string, message: m[2] as string } : { key: '(config)', message: sentence };
  });
}

/**
 * Runs every loader and returns their results, or throws ONE ConfigError listing the problems of
 * all of them (the same problem reported by two loaders, e.g. a shared LOG_LEVEL, once).
 * Anything that is not a configuration error is rethrown as it is.
 */
export function loadAllConfig<T extends Record<string, () => unknown>>(
  loaders: T,
): { [K in keyof T]: ReturnType<T[K]> } {
  const out: Record<string, unknown> = {};
  const issues: ConfigIssue[] = [];
  const seen = new Set<string>();
  for (const [name, load] of Object.entries(loaders)) {
    try {
      out[name] = load();
    } catch (err) {
      const found = configIssuesOf(err);
      if (!found) throw err;
      for (const issue of found) {
        const id = `${issue.key}\n${issue.message}`;
        if (!seen.has(id)) issues.push(issue);
        seen.add(id);
      }
    }
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return out as { [K in keyof T]: ReturnType<T[K]> };
}

/**
 * What to print for a start-up failure a person can fix (bad configuration, busy port, an engine
 * that never answered), or null
 * for anything else (which is logged with its stack as a crash).
 */
export function startupProblem(err: unknown): string | null {
  if (err instanceof PortInUseError || err instanceof PortsInUseError) return err.message;
  if (err instanceof ConfigError) return err.message;
  if (err instanceof DependenciesUnreachableError) return err.message;
  if (err instanceof SchemaRegistryStartupError) return err.message;
  return null;
}
