import { context, trace, TraceFlags } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '@subx/errors';
import { duplicateKeys } from '@subx/testing/log-lines';
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

describe('error serialization', () => {
  function rawCapture() {
    const raw: string[] = [];
    return { raw, destination: { write: (line: string) => void raw.push(line) } };
  }

  it('logs an AppError with message, code, stack and its cause chain, never "[unable to serialize]"', () => {
    const { raw, destination } = rawCapture();
    const logger = createLogger({ service: 's', destination });
    // A gRPC ServiceError carries metadata with circular internals; that used to sink the whole line.
    const serviceError = Object.assign(new Error('14 UNAVAILABLE: No connection established'), {
      code: 14,
      details: 'No connection established',
      metadata: {} as Record<string, unknown>,
    });
    serviceError.metadata.self = serviceError.metadata;
    serviceError.metadata.big = 10n;
    const appError = new AppError('UPSTREAM_ERROR', 'The platform answered garbage.', {
      cause: serviceError,
      details: { attempts: 3, loop: {} as Record<string, unknown> },
    });
    (appError.details as { loop: Record<string, unknown> }).loop.again = appError.details;
    logger.error({ err: appError }, 'request failed');
    logger.error(new AggregateError([new Error('first'), new TypeError('second')], 'all failed'));

    expect(raw.join('')).not.toContain('unable to serialize');
    const [first, second] = raw.map((l) => JSON.parse(l) as Record<string, Record<string, unknown>>);
    expect(first!.err).toMatchObject({
      type: 'AppError',
      message: 'The platform answered garbage.',
      code: 'UPSTREAM_ERROR',
      details: { attempts: 3, loop: { again: '[circular]' } },
      stack: expect.stringContaining('logger.test.ts'),
      cause: {
        type: 'Error',
        message: '14 UNAVAILABLE: No connection established',
        code: 14,
        details: 'No connection established',
        stack: expect.any(String),
      },
    });
    expect(second!.err).toMatchObject({
      type: 'AggregateError',
      message: 'all failed',
      errors: [
        { type: 'Error', message: 'first' },
        { type: 'TypeError', message: 'second' },
      ],
    });
    for (const line of raw) expect(duplicateKeys(line)).toEqual([]);
  });

  it('serializes errors under `error` and `cause` too, and plain values as they are', () => {
    const { raw, destination } = rawCapture();
    const logger = createLogger({ service: 's', destination });
    logger.warn({ error: new RangeError('too big'), cause: 'just text' }, 'x');
    const line = JSON.parse(raw[0]!) as Record<string, Record<string, unknown>>;
    expect(line.error).toMatchObject({ type: 'RangeError', message: 'too big', stack: expect.any(String) });
    expect(line.cause).toBe('just text');
  });
});
