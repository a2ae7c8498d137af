/**
 * Waiting for the engines before a service starts. A service started beside its Kafka, MongoDB or
 * Redis (a fresh cluster, a node so loaded that a first request times out) used to fail its first
 * call to them and exit, to be restarted by the orchestrator: a restart for nothing, and in CI a
 * failed "no restarts" check. Each engine is now asked until it answers, within
 * STARTUP_DEPENDENCY_TIMEOUT_MS; after that the service exits with one line naming what did not
 * answer and the variable that points at it.
 */
import { backoffDelay } from '@subx/ports';
import type { Logger } from '@subx/ports';
import { withTimeout } from './timeout.ts';

/** An engine a service needs (ports' `Adapters.dependencies` has this shape). */
export interface StartupDependency {
  name: string;
  /** Where it is, without credentials. */
  target: string;
  /** The variable that points at it. */
  variable: string;
  /** Resolves when the engine answers; rejects when not. Bounded here too (`checkTimeoutMs`). */
  check(): Promise<void>;
}

/** `kafka (kafka:9092, KAFKA_BROKERS) did not answer within 60 s: ...`, one line per engine. */
export class DependenciesUnreachableError extends Error {
  readonly unreachable: readonly { name: string; target: string; variable: string; lastError: string }[];

  constructor(
    unreachable: readonly { name: string; target: string; variable: string; lastError: string }[],
    timeoutMs: number,
  ) {
    const seconds = Math.round(timeoutMs / 100) / 10;
    super(
      unreachable
        .map(
          (u) =>
            `${u.name} (${u.target}, ${u.variable}) did not answer within ${seconds} s (STARTUP_DEPENDENCY_TIMEOUT_MS): ${u.lastError}`,
        )
        .join('; '),
    );
    this.name = 'DependenciesUnreachableError';
    this.unreachable = unreachable;
  }
}

export interface WaitForDependenciesOptions {
  /** The whole wait (STARTUP_DEPENDENCY_TIMEOUT_MS). */
  timeoutMs: number;
  logger: Pick<Logger, 'info' | 'warn'>;
  /** Bound on one check, whatever the engine's client does. Default 5 000 ms. */
  checkTimeoutMs?: number;
  /** First pause between checks of one engine, doubled up to `maxDelayMs`. Default 250 ms. */
  initialDelayMs?: number;
  /** Default 2 000 ms. */
  maxDelayMs?: number;
}

/**
 * Resolves once every dependency has answered a check (all asked at the same time), or throws a
 * DependenciesUnreachableError naming those that did not answer within `timeoutMs`. Each failed
 * check is logged at warn with the time left, so a service that waits says on what.
 */
export async function waitForDependencies(
  dependencies: readonly StartupDependency[],
  options: WaitForDependenciesOptions,
): Promise<void> {
  if (dependencies.length === 0) return;
  const startedAt = Date.now();
  const deadline = startedAt + options.timeoutMs;
  const checkTimeoutMs = options.checkTimeoutMs ?? 5_000;
  const initialDelayMs = options.initialDelayMs ?? 250;
  const maxDelayMs = options.maxDelayMs ?? 2_000;

  const waitFor = async (dependency: StartupDependency): Promise<string | null> => {
    for (let attempt = 1; ; attempt++) {
      const delay = backoffDelay({ baseMs: initialDelayMs, maxMs: maxDelayMs }, attempt);
      const left = deadline - Date.now();
      const error = await checkWithin(dependency, Math.max(1, Math.min(checkTimeoutMs, left)));
      if (error === null) {
        if (attempt > 1) {
          options.logger.info(
            {
              dependency: dependency.name,
              target: dependency.target,
              attempts: attempt,
              waitedMs: Date.now() - startedAt,
            },
            'dependency answers now',
          );
        }
        return null;
      }
      const leftAfterPause = deadline - Date.now() - delay;
      if (leftAfterPause <= 0) return error;
      options.logger.warn(
        {
          dependency: dependency.name,
          target: dependency.target,
          variable: dependency.variable,
          attempt,
          err: error,
          retryInMs: delay,
          leftMs: deadline - Date.now(),
        },
        'dependency not answering yet; waiting before starting',
      );
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  };

  const outcomes = await Promise.all(dependencies.map(async (d) => ({ d, error: await waitFor(d) })));
  const unreachable = outcomes
    .filter((o): o is { d: StartupDependency; error: string } => o.error !== null)
    .map(({ d, error }) => ({ name: d.name, target: d.target, variable: d.variable, lastError: error }));
  if (unreachable.length > 0) throw new DependenciesUnreachableError(unreachable, options.timeoutMs);
}

/** null when the check passed within `ms`, else why not (one line). */
function checkWithin(dependency: StartupDependency, ms: number): Promise<string | null> {
  return withTimeout(
    () => dependency.check().then(() => null, firstLine),
    ms,
    () => `no answer within ${ms} ms`,
  );
}

/** The error's first line, capped, without credentials of any URL in it (it is logged and printed). */
function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = (message.split('\n', 1)[0] ?? '').replace(/\/\/[^/@\s]*@/g, '//');
  return line.slice(0, 300) || 'failed';
}

/**
 * A composition root's one line: waits for the engines of `adapters` (ports' `createAdapters`)
 * within STARTUP_DEPENDENCY_TIMEOUT_MS, and closes the adapters when one never answers (their
 * reconnect timers would otherwise keep the failed process alive).
 */
export async function waitForEngines(
  adapters: { dependencies: readonly StartupDependency[]; close(): Promise<void> },
  config: { STARTUP_DEPENDENCY_TIMEOUT_MS: number },
  logger: WaitForDependenciesOptions['logger'],
): Promise<void> {
  try {
    await waitForDependencies(adapters.dependencies, {
      timeoutMs: config.STARTUP_DEPENDENCY_TIMEOUT_MS,
      logger,
    });
  } catch (error) {
    await adapters.close().catch(() => undefined);
    throw error;
  }
}
