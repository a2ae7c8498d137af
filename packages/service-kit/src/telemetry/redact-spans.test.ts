import { describe, expect, it } from 'vitest';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { redactAttributes, redactSpan, redactUrlSecrets, redactingExporter } from './redact-spans.ts';

describe('redactUrlSecrets', () => {
  it('redacts the values of secret-named parameters and keeps the rest readable', () => {
    expect(redactUrlSecrets('/reset?token=abc')).toBe('/reset?token=[redacted]');
    expect(redactUrlSecrets('http://h/verify?lang=en&token=abc&x=1')).toBe(
      'http://h/verify?lang=en&token=[redacted]&x=1',
    );
    expect(redactUrlSecrets('/x?api_key=k1&key=k2&apiKey=k3&password=p&secret=s&code=c&sig=g&url=u')).toBe(
      '/x?api_key=[redacted]&key=[redacted]&apiKey=[redacted]&password=[redacted]&secret=[redacted]&code=[redacted]&sig=[redacted]&url=u',
    );
    // A bare query (url.query) has no `?`.
    expect(redactUrlSecrets('token=abc&from=2026-01-01', true)).toBe('token=[redacted]&from=2026-01-01');
    // Without `?`, a path is not a query: `a=b` in a path stays.
    expect(redactUrlSecrets('/docs/token=x')).toBe('/docs/token=x');
  });

  it('sees separators and names through percent-encoding', () => {
    expect(redactUrlSecrets('/reset?t=1%3Btoken%3Dabc')).toBe('/reset?t=1%3Btoken%3D[redacted]');
    expect(redactUrlSecrets('/reset?x=1%26api%5Fkey=abc')).toBe('/reset?x=1%26api%5Fkey=[redacted]');
    expect(redactUrlSecrets('/r?t=1;token=abc')).toBe('/r?t=1;token=[redacted]');
  });

  it('redacts API-key-shaped strings anywhere, encoded or not', () => {
    const key = 'sxk_v1_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345';
    expect(redactUrlSecrets(`/api/v1/${key}/x`)).toBe('/api/v1/sxk_v1_[redacted]/x');
    expect(redactUrlSecrets(`/v?url=${key}`)).toBe('/v?url=sxk_v1_[redacted]');
    expect(redactUrlSecrets(`/v?url=sxk%5Fv1%5FABC`)).toBe('/v?url=sxk_v1_[redacted]');
    expect(redactUrlSecrets(`a message with ${key}`)).toBe('a message with sxk_v1_[redacted]');
  });
});

describe('redactSpan', () => {
  it('redacts attributes, event attributes and the name in place', () => {
    const span = {
      name: 'GET /reset?token=abc',
      attributes: {
        'url.query': 'token=abc',
        'url.full': 'http://h/verify?token=abc',
        'http.target': '/reset?token=abc',
        'http.url': 'http://h/x?key=sxk_v1_ABC',
        'http.status_code': 200,
        tags: ['/a?token=abc', 'plain'],
      },
      events: [{ attributes: { 'exception.message': 'bad url /verify?token=abc' } }, {}],
    };
    redactSpan(span);
    expect(span).toEqual({
      name: 'GET /reset?token=[redacted]',
      attributes: {
        'url.query': 'token=[redacted]',
        'url.full': 'http://h/verify?token=[redacted]',
        'http.target': '/reset?token=[redacted]',
        'http.url': 'http://h/x?key=[redacted]',
        'http.status_code': 200,
        tags: ['/a?token=[redacted]', 'plain'],
      },
      events: [{ attributes: { 'exception.message': 'bad url /verify?token=[redacted]' } }, {}],
    });
    expect(() => redactAttributes(undefined)).not.toThrow();
  });
});

describe('redactingExporter', () => {
  it('hands the exporter only redacted spans (the OTLP path)', async () => {
    const memory = new InMemorySpanExporter();
    const provider = new TracerProvider({
      spanProcessors: [new SimpleSpanProcessor({ exporter: redactingExporter(memory) })],
    });
    const span = provider.getTracer('t').startSpan('GET', {
      attributes: { 'url.full': 'http://h/reset?token=abc', 'url.query': 'token=abc' },
    });
    span.end();
    await provider.forceFlush();
    const [exported] = memory.getFinishedSpans();
    expect(exported?.attributes).toEqual({
      'url.full': 'http://h/reset?token=[redacted]',
      'url.query': 'token=[redacted]',
    });
    await provider.shutdown();
  });
});
