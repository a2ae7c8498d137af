/**
 * Starts the OpenTelemetry NodeSDK. W3C trace-context (+ baggage) propagation is always on and a
 * tracer provider always exists, so `traceparent` flows HTTP → gRPC → Kafka with real span ids
 * even when nothing is exported; spans are exported over OTLP (http/protobuf) only when
 * OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set.
 *
 * No span leaves the process (or reaches a test's collector) with a one-time token or an API key in
 * it: telemetry/redact-spans.ts runs first on every ended span and wraps the OTLP exporter.
 *
 * Services do not call this directly: `node --import @subx/service-kit/instrumentation` does it
 * (see instrumentation.ts / bootstrap.ts), because the hooks must be in place before any
 * instrumented library is imported.
 */
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { NodeSDKConfiguration } from '@opentelemetry/sdk-node';
import { createInstrumentations } from './instrumentations.ts';
import { redactSpan, redactingExporter } from './telemetry/redact-spans.ts';

export type SdkInstrumentation = NodeSDKConfiguration['instrumentations'][number];
export type SpanProcessor = NonNullable<NodeSDKConfiguration['spanProcessors']>[number];

export interface StartTelemetryOptions {
  serviceName: string;
  /** Default: createInstrumentations(). */
  instrumentations?: readonly SdkInstrumentation[];
  /** Added to the list, e.g. the gateway's `new FastifyOtelInstrumentation(...)`. */
  extraInstrumentations?: readonly SdkInstrumentation[];
  /** Replaces the exporter choice (tests: an in-memory collector). */
  spanProcessors?: SpanProcessor[];
  /** Default process.env. */
  env?: Record<string, string | undefined>;
}

export interface Telemetry {
  /** True when spans leave the process (an OTLP endpoint is configured or processors were given). */
  readonly exporting: boolean;
  /** Flushes and stops; register it as the last lifecycle stop (so it is registered first). */
  shutdown(): Promise<void>;
}

// Without any span processor NodeSDK registers no tracer provider, and then every span is a
// non-recording copy of its parent: trace ids would still flow but span ids would not change
// between hops. A processor that drops everything keeps real spans without exporting them.
const dropSpans: SpanProcessor = {
  onStart: () => {},
  onEnd: () => {},
  forceFlush: async () => {},
  shutdown: async () => {},
};

// Processors run in order: this one first, so every later processor sees the redacted span.
const redactSpans: SpanProcessor = {
  onStart: () => {},
  onEnd: (span) => redactSpan(span),
  forceFlush: async () => {},
  shutdown: async () => {},
};

let active: Telemetry | undefined;

/** The telemetry started in this process (by the --import preload), if any. */
export function activeTelemetry(): Telemetry | undefined {
  return active;
}

export function startTelemetry(options: StartTelemetryOptions): Telemetry {
  const env = options.env ?? process.env;
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const instrumentations = [
    ...(options.instrumentations ?? createInstrumentations()),
    ...(options.extraInstrumentations ?? []),
  ];

  const exporting = Boolean(options.spanProcessors?.length) || Boolean(endpoint);
  const sdk = new NodeSDK({
    serviceName: options.serviceName,
    instrumentations,
    textMapPropagator: new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
    }),
    ...(options.spanProcessors
      ? { spanProcessors: [redactSpans, ...options.spanProcessors] }
      : endpoint
        ? { traceExporter: redactingExporter(new OTLPTraceExporter()) }
        : { spanProcessors: [dropSpans] }),
    // Metrics and the OTel log pipeline are off: logs go to stdout as JSON.
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  let stopped: Promise<void> | undefined;
  active = {
    exporting,
    shutdown: () => (stopped ??= sdk.shutdown()),
  };
  return active;
}
