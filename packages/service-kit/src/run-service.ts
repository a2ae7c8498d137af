/**
 * The shared shape of every service's `main.ts`: load config (print every bad variable, of the
 * service's schema and of its extra loaders together, and exit 1), log it redacted, serve `/metrics`
 * on METRICS_PORT, build the service, register it with the lifecycle, and stop gracefully on
 * SIGTERM/SIGINT. A start that fails for a reason a person can fix (a busy port) prints one line and
 * exits 1, no stack trace. Each main.ts stays a composition root of a few lines.
 */
import type { z } from 'zod';
import { loadConfig, redactConfig, secretKeysOf } from './config.ts';
import { loadAllConfig, startupProblem } from './startup-errors.ts';
import { createLifecycle } from './lifecycle.ts';
import { createLogger } from './logger.ts';
import { activeTelemetry } from './telemetry.ts';
import { startMetricsServer, type MetricsServer } from './metrics/server.ts';
// pino's own type: the root logger, whose children the service's parts get (and fastify takes).
import type { Logger as PinoLogger } from 'pino';

export interface RunnableService {
  /** Stops intake and in-flight work, then releases resources (under the shutdown deadline). */
  stop(): Promise<void>;
}

export async function runService<S extends z.ZodType, E = undefined>(options: {
  service: string;
  schema: S;
  /**
   * More configuration read from the same environment (the YouTube client's YOUTUBE_* variables);
   * its problems are listed together with the schema's.
   */
  extraConfig?: (env: Record<string, string | undefined>) => E;
  start: (config: z.output<S>, logger: PinoLogger, extra: E) => Promise<RunnableService>;
  env?: Record<string, string | undefined>;
  /** Where the one-line start-up problems go (default stderr). */
  printProblem?: (line: string) => void;
}): Promise<void> {
  const env = options.env ?? process.env;
  const print = options.printProblem ?? ((line: string) => console.error(line));
  let config: z.output<S>;
  let extra: E;
  try {
    ({ config, extra } = loadAllConfig({
      config: () => loadConfig(options.schema, env) as z.output<S>,
      extra: () => options.extraConfig?.(env) as E,
    }));
  } catch (err) {
    const problem = startupProblem(err);
    if (problem === null) throw err;
    print(`${options.service}: ${problem}`);
    process.exitCode = 1;
    return;
  }
  const settings = config as Record<string, unknown>;
  const logger = createLogger({ service: options.service, level: String(settings.LOG_LEVEL ?? 'info') });
  logger.info({ config: redactConfig(settings, secretKeysOf(options.schema)) }, 'configuration loaded');

  const shutdownTimeoutMs =
    typeof settings.SHUTDOWN_TIMEOUT_MS === 'number' ? settings.SHUTDOWN_TIMEOUT_MS : 10_000;
  const lifecycle = createLifecycle({ logger, shutdownTimeoutMs });
  // Registered first so it stops last: spans of the shutdown itself are still flushed.
  lifecycle.register('telemetry', { stop: () => activeTelemetry()?.shutdown() });
  // METRICS_PORT (config helper `metricsPort`): number = serve /metrics there, null = off.
  const metricsPort = settings.METRICS_PORT;
  if (typeof metricsPort === 'number') {
    let metrics: MetricsServer | undefined;
    lifecycle.register('metrics', {
      start: async () => {
        metrics = await startMetricsServer({ port: metricsPort, logger });
      },
      stop: () => metrics?.close(),
    });
  }
  let running: RunnableService | undefined;
  lifecycle.register(options.service, {
    start: async () => {
      running = await options.start(config, logger, extra);
    },
    stop: async () => {
      await running?.stop();
    },
  });
  lifecycle.installSignalHandlers();
  try {
    await lifecycle.start();
  } catch (err) {
    const problem = startupProblem(err);
    if (problem === null) logger.fatal({ err }, 'start failed');
    else print(`${options.service}: ${problem}`);
    process.exitCode = 1;
    await lifecycle.stop('start failed');
    // What the failed start had already opened (a listening gRPC server, a Kafka consumer) belongs
    // to no registered component, so nothing closes it and the process would linger, looking
    // healthy, without the rest of its start (seen when Kafka restarted during an extractor's
    // start). Exiting lets the orchestrator start it again.
    process.exit(1);
  }
}
