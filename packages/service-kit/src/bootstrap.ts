/**
 * Registers the ESM hook and starts telemetry, in the order that makes ESM auto-instrumentation
 * work (Node 24, import-in-the-middle 3.x, @opentelemetry/instrumentation 0.30x):
 *
 * 1. `module.register('import-in-the-middle/hook.mjs', …)` with a message channel, so the loader
 *    wraps only the modules an instrumentation asked for (wrapping every module is slow and breaks
 *    some packages);
 * 2. construct the instrumentations: each one registers its require hook (CJS, which is how
 *    grpc-js, ioredis, kafkajs, mongodb and pino load their internals) and its import hook;
 * 3. wait until the loader thread acknowledged those import hooks;
 * 4. only then import the SDK. `@opentelemetry/sdk-node` itself imports @grpc/grpc-js (for its OTLP
 *    gRPC exporters); importing it before step 2 would load grpc-js unpatched.
 *
 * Nothing in this file may import an instrumented library statically.
 */
import { register } from 'node:module';
import { isMainThread } from 'node:worker_threads';
import { createAddHookMessageChannel } from 'import-in-the-middle';
import type { SdkInstrumentation, SpanProcessor, Telemetry } from './telemetry.ts';

export interface BootstrapOptions {
  /** Default OTEL_SERVICE_NAME, else 'unknown_service:node'. */
  serviceName?: string;
  /** Built after the hooks are registered, e.g. `async () => [new FastifyOtelInstrumentation(…)]`. */
  extraInstrumentations?: () => SdkInstrumentation[] | Promise<SdkInstrumentation[]>;
  /** Tests: collect spans in memory instead of exporting. */
  spanProcessors?: SpanProcessor[];
}

export async function bootstrapTelemetry(options: BootstrapOptions = {}): Promise<Telemetry | undefined> {
  // Worker threads inherit --import; the SDK belongs to the main thread only.
  if (!isMainThread) return undefined;
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);

  const { createInstrumentations } = await import('./instrumentations.ts');
  const instrumentations: SdkInstrumentation[] = [
    ...createInstrumentations(),
    ...((await options.extraInstrumentations?.()) ?? []),
  ];
  await waitForAllMessagesAcknowledged();

  const { startTelemetry } = await import('./telemetry.ts');
  return startTelemetry({
    serviceName: options.serviceName ?? (process.env.OTEL_SERVICE_NAME || 'unknown_service:node'),
    instrumentations,
    ...(options.spanProcessors ? { spanProcessors: options.spanProcessors } : {}),
  });
}
