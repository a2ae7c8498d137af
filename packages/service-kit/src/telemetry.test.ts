import { context, logs, propagation, trace } from '@opentelemetry/api';
import type { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { afterAll, describe, expect, it } from 'vitest';
import { createInstrumentations } from './instrumentations.ts';
import { activeTelemetry, startTelemetry } from './telemetry.ts';
import type { SpanProcessor } from './telemetry.ts';
import { currentTraceParent, injectTraceContext, withSpan } from './trace-context.ts';

type EndedSpan = Parameters<SpanProcessor['onEnd']>[0];

describe('startTelemetry', () => {
  const ended: EndedSpan[] = [];
  const collector: SpanProcessor = {
    onStart: () => {},
    onEnd: (span) => void ended.push(span),
    forceFlush: async () => {},
    shutdown: async () => {},
  };
  // No instrumentations here: this checks SDK wiring, the ESM proof is test/telemetry.test.ts.
  const telemetry = startTelemetry({
    serviceName: 'unit',
    instrumentations: [],
    spanProcessors: [collector],
    env: {},
  });
  // NodeSDK's shutdown leaves its tracer provider, propagator, context manager and logger provider
  // registered with the API, process-wide: unregistered here, so that the files run after this one
  // in the same worker find the API as in a process without telemetry (and can register their own).
  afterAll(async () => {
    await telemetry.shutdown();
    trace.disable();
    propagation.disable();
    context.disable();
    logs.disable();
  });

  it('registers a tracer provider and W3C propagation; child spans get fresh ids in the same trace', async () => {
    expect(telemetry.exporting).toBe(true);
    expect(activeTelemetry()).toBe(telemetry);
    await withSpan('parent', async () => {
      const parentId = trace.getActiveSpan()?.spanContext().spanId;
      const headers = injectTraceContext({});
      expect(headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      await withSpan('child', () => {
        expect(currentTraceParent()).not.toContain(parentId);
      });
    });
    const parent = ended.find((s) => s.name === 'parent');
    const child = ended.find((s) => s.name === 'child');
    expect(child?.spanContext().traceId).toBe(parent?.spanContext().traceId);
    expect(child?.parentSpanContext?.spanId).toBe(parent?.spanContext().spanId);
    expect(parent?.resource.attributes['service.name']).toBe('unit');
    expect(propagation.fields()).toContain('traceparent');
    expect(context.active()).toBeDefined();
  });

  it('records server errors on the span but not caller (4xx) AppErrors', async () => {
    const { Errors } = await import('@subx/errors');
    await withSpan('not-found', () => Promise.reject(Errors.videoNotFound('v'))).catch(() => {});
    await withSpan('broken', () => Promise.reject(new Error('db down'))).catch(() => {});
    expect(ended.find((s) => s.name === 'not-found')?.status.code).toBe(0);
    expect(ended.find((s) => s.name === 'not-found')?.attributes['app.error_code']).toBe('VIDEO_NOT_FOUND');
    expect(ended.find((s) => s.name === 'broken')?.status.code).toBe(2);
  });

  it('the instrumentation list is explicit and ignores health paths', () => {
    const list = createInstrumentations();
    expect(list.map((i) => i.instrumentationName)).toEqual([
      '@opentelemetry/instrumentation-http',
      '@opentelemetry/instrumentation-grpc',
      '@opentelemetry/instrumentation-ioredis',
      '@opentelemetry/instrumentation-kafkajs',
      '@opentelemetry/instrumentation-mongodb',
      '@opentelemetry/instrumentation-pino',
    ]);
    // Each instrumentation enables itself (patches its library) when it is made.
    try {
      const http = list[0] as HttpInstrumentation;
      const ignore = http.getConfig().ignoreIncomingRequestHook!;
      expect(ignore({ url: '/health/ready?x=1' } as never)).toBe(true);
      expect(ignore({ url: '/api/v1/extract' } as never)).toBe(false);
    } finally {
      for (const i of list) i.disable();
    }
  });
});
