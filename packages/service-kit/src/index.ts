export * from './config.ts';
export * from './logger.ts';
export * from './lifecycle.ts';
export * from './health.ts';
export * from './grpc.ts';
export * from './trace-context.ts';
export { startTelemetry } from './telemetry.ts';
export type { SdkInstrumentation, SpanProcessor, StartTelemetryOptions, Telemetry } from './telemetry.ts';
export { HEALTH_PATHS, createInstrumentations } from './instrumentations.ts';
