import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { Errors } from '@subx/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  contextFromTraceParent,
  currentTraceParent,
  extractTraceContext,
  injectTraceContext,
  withSpan,
} from './trace-context.ts';

const TRACE_PARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('trace context helpers (API only, no SDK)', () => {
  const manager = new AsyncLocalStorageContextManager();
  beforeAll(() => {
    context.setGlobalContextManager(manager.enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  });
  afterAll(() => {
    propagation.disable();
    context.disable();
  });

  it('extracts from Kafka-style Buffer headers and injects the same traceparent back', () => {
    const ctx = extractTraceContext({ traceparent: Buffer.from(TRACE_PARENT), other: undefined });
    expect(trace.getSpanContext(ctx)?.traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(injectTraceContext({}, ctx).traceparent).toBe(TRACE_PARENT);
    expect(currentTraceParent(ctx)).toBe(TRACE_PARENT);
  });

  it('outside a trace there is no traceparent, and bad input gives the root context', () => {
    expect(currentTraceParent()).toBeUndefined();
    expect(trace.getSpanContext(contextFromTraceParent('garbage'))).toBeUndefined();
    expect(trace.getSpanContext(contextFromTraceParent(undefined))).toBeUndefined();
  });

  it('withSpan runs under the given parent and returns the result', async () => {
    const parent = contextFromTraceParent(TRACE_PARENT);
    const seen = await withSpan('work', async () => currentTraceParent(), { 'app.x': 1 }, { parent });
    // Without an SDK the span is non-recording and carries the parent's context.
    expect(seen).toContain('0af7651916cd43dd8448eb211c80319c');
  });

  it('withSpan rethrows', async () => {
    await expect(withSpan('fails', () => Promise.reject(Errors.videoNotFound('x')))).rejects.toMatchObject({
      code: 'VIDEO_NOT_FOUND',
    });
    await expect(
      withSpan('throws', () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
  });
});
