/**
 * The shared shape of every service's `main.ts`: load config (print every bad variable and exit 1),
 * log it redacted, serve `/metrics` on METRICS_PORT, build the service, register it with the
 * lifecycle, and stop gracefully on SIGTERM/SIGINT. Each main.ts stays a composition root of a few
 * lines.
 */
import type { z } from 'zod';
import { ConfigError, loadConfig, redactConfig, secretKeysOf } from './config.ts';
import { createLifecycle } from './lifecycle.ts';
import { createLogger } from './logger.ts';
import { activeTelemetry } from './telemetry.ts';
import { startMetricsServer, type MetricsServer } from './metrics/server.ts';
import type { Logger } from 'pino';

export interface RunnableService {
  /** Stops intake and in-flight work, then releases resources (under the shutdown deadline). */
  stop(): Promise<void>;
}

export async function runService<S extends z.ZodType>(options: {
  service: string;
  schema: S;
  start: (config: z.output<S>, logger: Logger) => Promise<RunnableService>;
  env?: Record<string, string | undefined>;
}): Promise<void> {
  let config: z.output<S>;
  try {
    config = loadConfig(options.schema, options.env ?? process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`${options.service}: invalid configuration\n${err.message}`);
      process.exitCode = 1;
      return;
    }
    throw err;
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
      running = await options.start(config, logger);
    },
    stop: async () => {
      await running?.stop();
    },
  });
  lifecycle.installSignalHandlers();
  try {
    await lifecycle.start();
  } catch (err) {
    logger.fatal({ err }, 'start failed');
    process.exitCode = 1;
    await lifecycle.stop('start failed');
  }
}
