import { context, trace, TraceFlags } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, withRequestId } from './logger.ts';

function capture() {
  const lines: Record<string, unknown>[] = [];
  return {
    lines,
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  };
}

describe('createLogger', () => {
  const contextManager = new AsyncLocalStorageContextManager();
  beforeAll(() => {
    context.setGlobalContextManager(contextManager.enable());
  });
  afterAll(() => {
    contextManager.disable();
    context.disable();
  });

  it('writes JSON lines with service, pid, level label and message', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ service: 'billing', destination });
    logger.info({ n: 1 }, 'hello');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      service: 'billing',
      pid: process.pid,
      level: 'info',
      msg: 'hello',
      n: 1,
    });
    expect(typeof lines[0]?.time).toBe('string');
  });

  it('respects the level', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ service: 's', level: 'warn', destination });
    logger.info('dropped');
    logger.warn('kept');
    expect(lines.map((l) => l.msg)).toEqual(['kept']);
  });

  it('censors secret fields at the top level and nested', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ service: 's', destination, redactFields: ['x-custom-secret'] });
    logger.info(
      {
        password: 'p@ss',
        apiKey: 'k1',
        req: { headers: { authorization: 'Bearer abc', 'x-api-key': 'sk_live_1', accept: 'json' } },
        config: { ADMIN_TOKEN: 'admintok', OPENAI_API_KEY: 'sk-openai', pepper: 'pep', PORT: 1 },
        err: { detail: { token: 'tok' } },
        other: { 'x-custom-secret': 'custom' },
      },
      'request',
    );
    const line = JSON.stringify(lines[0]);
    for (const value of [
      'p@ss',
      'k1',
      'Bearer abc',
      'sk_live_1',
      'admintok',
      'sk-openai',
      'pep"',
      'tok"',
      'custom"',
    ]) {
      expect(line).not.toContain(value);
    }
    expect(lines[0]).toMatchObject({
      password: '[redacted]',
      req: { headers: { authorization: '[redacted]', 'x-api-key': '[redacted]', accept: 'json' } },
      config: { PORT: 1, ADMIN_TOKEN: '[redacted]' },
    });
  });

  it('adds request_id through child loggers', () => {
    const { lines, destination } = capture();
    const logger = withRequestId(createLogger({ service: 's', destination }), 'req-42');
    logger.info('x');
    expect(lines[0]).toMatchObject({ request_id: 'req-42', service: 's' });
  });

  it('adds trace_id and span_id while a span is active, and not otherwise', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ service: 's', destination });
    const spanContext = {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: TraceFlags.SAMPLED,
    };
    const span = trace.wrapSpanContext(spanContext);
    context.with(trace.setSpan(context.active(), span), () => logger.info('inside'));
    logger.info('outside');
    expect(lines[0]).toMatchObject({
      trace_id: spanContext.traceId,
      span_id: spanContext.spanId,
      trace_flags: '01',
    });
    expect(lines[1]).not.toHaveProperty('trace_id');
  });

  it('serialises errors with message and stack', () => {
    const { lines, destination } = capture();
    createLogger({ service: 's', destination }).error({ err: new Error('boom') }, 'failed');
    expect(lines[0]).toMatchObject({ err: { type: 'Error', message: 'boom' } });
    expect(String((lines[0]?.err as { stack?: string }).stack)).toContain('boom');
  });
});
