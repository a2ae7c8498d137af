// Proves ESM auto-instrumentation end to end: a child process is started exactly as services are
// (`node --import <preload> <main>.ts`, ESM imports of node:http and @grpc/grpc-js) with the real
// bootstrap and an in-memory span collector. One HTTP request that makes one gRPC call must give
// one trace: HTTP client → HTTP server → gRPC client → gRPC server → a manual span, with the
// trace id also in the logs and in the headers a Kafka producer would send.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));

interface SpanOut {
  name: string;
  kind: number;
  scope: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Record<string, unknown>;
}
interface Output {
  body: string;
  traceParentInHandler?: string;
  kafkaHeaders: Record<string, string>;
  logLine?: Record<string, unknown>;
  spans: SpanOut[];
}

function runTracedApp(): Promise<Output> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', '--import', './memory-telemetry.ts', './traced-app.ts'],
      {
        cwd: fixtures,
        timeout: 60_000,
        // No exporter endpoint: spans must still exist and propagate.
        env: { PATH: process.env.PATH ?? '', OTEL_EXPORTER_OTLP_ENDPOINT: '' },
      },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`traced app failed: ${err.message}\n${stderr}`));
        else resolve(JSON.parse(stdout) as Output);
      },
    );
  });
}

const SpanKind = { INTERNAL: 0, SERVER: 1, CLIENT: 2 };

describe('telemetry (ESM, node --import)', () => {
  it('HTTP → gRPC → manual span form one trace, propagated and logged', async () => {
    const out = await runTracedApp();
    expect(out.body).toBe('{"videoId":"abc"}');

    const find = (scope: string, kind: number, pred: (s: SpanOut) => boolean = () => true) =>
      out.spans.find((s) => s.scope === scope && s.kind === kind && pred(s));
    const httpServer = find(
      '@opentelemetry/instrumentation-http',
      SpanKind.SERVER,
      (s) => s.attributes['url.path'] === '/comments',
    );
    const httpClient = find(
      '@opentelemetry/instrumentation-http',
      SpanKind.CLIENT,
      (s) => s.spanId === httpServer?.parentSpanId,
    );
    const grpcClient = find('@opentelemetry/instrumentation-grpc', SpanKind.CLIENT);
    const grpcServer = find('@opentelemetry/instrumentation-grpc', SpanKind.SERVER);
    const manual = out.spans.find((s) => s.name === 'comments.publish');

    expect(httpServer, 'HTTP server span').toBeDefined();
    expect(httpClient, 'HTTP client span').toBeDefined();
    expect(grpcClient, 'gRPC client span').toBeDefined();
    expect(grpcServer, 'gRPC server span').toBeDefined();
    expect(manual, 'withSpan span').toBeDefined();

    const traceId = httpServer!.traceId;
    for (const span of [httpClient, grpcClient, grpcServer, manual]) expect(span!.traceId).toBe(traceId);
    expect(grpcClient!.parentSpanId).toBe(httpServer!.spanId);
    expect(grpcServer!.parentSpanId).toBe(grpcClient!.spanId);
    expect(manual!.parentSpanId).toBe(grpcServer!.spanId);
    expect(grpcServer!.attributes['rpc.service']).toBe('subx.comments.v1.CommentsService');

    // The trace continues into what a Kafka producer would attach, and into the logs.
    expect(out.traceParentInHandler).toBe(`00-${traceId}-${grpcServer!.spanId}-01`);
    expect(out.kafkaHeaders.traceparent).toBe(`00-${traceId}-${manual!.spanId}-01`);
    expect(out.logLine).toMatchObject({ trace_id: traceId, span_id: grpcServer!.spanId, request_id: 'r1' });

    // Health probes are not traced.
    expect(
      out.spans.some((s) => s.kind === SpanKind.SERVER && s.attributes['url.path'] === '/health/ready'),
    ).toBe(false);
  });
});
