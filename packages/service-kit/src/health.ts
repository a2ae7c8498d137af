/**
 * Named dependency checks with per-check timeouts, run concurrently. A failing *critical* check
 * makes the whole status 'down' (not ready: take the pod out of rotation); a failing non-critical
 * one makes it 'degraded' (still serving, something optional is off).
 */

export type HealthStatus = 'ok' | 'degraded' | 'down';

export interface CheckResult {
  status: 'ok' | 'fail';
  critical: boolean;
  durationMs: number;
  /** Short reason on failure ('timeout after 2000ms' or the error message). */
  error?: string;
}

export interface HealthReport {
  status: HealthStatus;
  checks: Record<string, CheckResult>;
}

/** Resolve (or return true) when healthy; throw or return false when not. */
export type HealthCheck = (signal: AbortSignal) => Promise<unknown> | unknown;

export interface CheckOptions {
  /** Default: the registry's defaultTimeoutMs. */
  timeoutMs?: number;
  /** Default true. */
  critical?: boolean;
}

export interface HealthRegistry {
  register(name: string, check: HealthCheck, options?: CheckOptions): void;
  run(): Promise<HealthReport>;
}

export interface HealthRegistryOptions {
  /** Default 2000 ms. */
  defaultTimeoutMs?: number;
  /** Injectable clock for durations. */
  now?: () => number;
}

class CheckTimeoutError extends Error {}

export function createHealthRegistry(options: HealthRegistryOptions = {}): HealthRegistry {
  const defaultTimeoutMs = options.defaultTimeoutMs ?? 2_000;
  const now = options.now ?? (() => performance.now());
  const checks = new Map<string, { check: HealthCheck; timeoutMs: number; critical: boolean }>();

  async function runOne(check: HealthCheck, timeoutMs: number): Promise<void> {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new CheckTimeoutError(`timeout after ${timeoutMs}ms`));
      }, timeoutMs);
    });
    try {
      const result = await Promise.race([Promise.resolve().then(() => check(controller.signal)), timeout]);
      if (result === false) throw new Error('check reported unhealthy');
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    register(name, check, opts = {}) {
      if (checks.has(name)) throw new Error(`health check "${name}" is already registered`);
      checks.set(name, {
        check,
        timeoutMs: opts.timeoutMs ?? defaultTimeoutMs,
        critical: opts.critical ?? true,
      });
    },

    async run() {
      const entries = [...checks.entries()];
      const results = await Promise.all(
        entries.map(async ([name, { check, timeoutMs, critical }]): Promise<[string, CheckResult]> => {
          const t0 = now();
          try {
            await runOne(check, timeoutMs);
            return [name, { status: 'ok', critical, durationMs: Math.round(now() - t0) }];
          } catch (err) {
            const error = err instanceof Error ? err.message : String(err);
            return [name, { status: 'fail', critical, durationMs: Math.round(now() - t0), error }];
          }
        }),
      );
      const failed = results.filter(([, r]) => r.status === 'fail');
      const status: HealthStatus = failed.some(([, r]) => r.critical)
        ? 'down'
        : failed.length > 0
          ? 'degraded'
          : 'ok';
      return { status, checks: Object.fromEntries(results) };
    },
  };
}
