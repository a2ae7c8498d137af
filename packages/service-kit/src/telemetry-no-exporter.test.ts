import { context, logs, propagation, trace } from '@opentelemetry/api';
import { afterAll, describe, expect, it } from 'vitest';
import { startTelemetry } from './telemetry.ts';
import { contextFromTraceParent, currentTraceParent, withSpan } from './trace-context.ts';

describe('startTelemetry without an OTLP endpoint', () => {
  const telemetry = startTelemetry({ serviceName: 'unit', instrumentations: [], env: {} });
  // What NodeSDK registered with the API stays registered after its shutdown (telemetry.test.ts).
  afterAll(async () => {
    await telemetry.shutdown();
    trace.disable();
    propagation.disable();
    context.disable();
    logs.disable();
  });

  it('exports nothing but still creates real spans, so each hop gets its own span id', async () => {
    expect(telemetry.exporting).toBe(false);
    const incoming = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const outgoing = await withSpan('hop', () => currentTraceParent(), undefined, {
      parent: contextFromTraceParent(incoming),
    });
    expect(outgoing).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
    expect(outgoing).not.toBe(incoming);
    expect(trace.getTracerProvider().constructor.name).not.toBe('NoopTracerProvider');
  });
});
