/**
 * Preload entry: `node --import @subx/service-kit/instrumentation src/main.ts`.
 * Reads OTEL_SERVICE_NAME (and the standard OTEL_* variables) and must run before the main module
 * so that ESM imports of http, grpc-js, ioredis, kafkajs, mongodb and pino get instrumented.
 * main.ts gets the handle with `import { telemetry } from '@subx/service-kit/instrumentation'`
 * (the same module instance) to register `telemetry.shutdown()` with its lifecycle.
 */
import { bootstrapTelemetry } from './bootstrap.ts';

export const telemetry = await bootstrapTelemetry();
