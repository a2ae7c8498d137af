/**
 * The explicit instrumentation list. This module imports only instrumentation packages (never the
 * libraries they patch), so constructing the list registers the require/import hooks before
 * grpc-js, ioredis, kafkajs, mongodb or pino are loaded.
 */
import { GrpcInstrumentation } from '@opentelemetry/instrumentation-grpc';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { KafkaJsInstrumentation } from '@opentelemetry/instrumentation-kafkajs';
import { MongoDBInstrumentation } from '@opentelemetry/instrumentation-mongodb';
import { PinoInstrumentation } from '@opentelemetry/instrumentation-pino';
import type { ClientRequest, IncomingMessage } from 'node:http';

/** Probe and health endpoints: no spans for them (they would drown real traffic). */
export const HEALTH_PATHS: readonly string[] = ['/health', '/health/live', '/health/ready', '/api/v1/health'];

function pathOf(url: string | undefined): string {
  if (!url) return '';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** What stands for an outgoing request's path and query in its span. */
export const REDACTED_PATH = '/[redacted]';

interface AttributeSink {
  setAttribute(key: string, value: string): unknown;
}

/**
 * An outgoing request's span keeps its origin only: a URL's path or query can carry a credential
 * (a webhook receiver's secret path, a token in a query), and traces are read by more people, and
 * kept longer, than the configuration that holds it.
 */
export function redactOutgoingUrl(span: AttributeSink, request: ClientRequest | IncomingMessage): void {
  if (!('getHeader' in request) || typeof request.getHeader !== 'function') return; // incoming
  const client = request as ClientRequest;
  const host = String(client.getHeader('host') ?? client.host);
  const origin = `${client.protocol}//${host}`;
  span.setAttribute('url.full', `${origin}${REDACTED_PATH}`);
  span.setAttribute('http.url', `${origin}${REDACTED_PATH}`);
  span.setAttribute('url.path', REDACTED_PATH);
  span.setAttribute('http.target', REDACTED_PATH);
  span.setAttribute('url.query', '');
}

export interface InstrumentationOptions {
  ignorePaths?: readonly string[];
}

export function createInstrumentations(options: InstrumentationOptions = {}) {
  const ignore = new Set(options.ignorePaths ?? HEALTH_PATHS);
  return [
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (req) => ignore.has(pathOf(req.url)),
      applyCustomAttributesOnSpan: (span, request) => redactOutgoingUrl(span, request),
    }),
    // grpc.health.v1 Check/Watch are probe traffic too.
    new GrpcInstrumentation({ ignoreGrpcMethods: ['Check', 'Watch'] }),
    // Background connection pings and index builds without a parent are noise.
    new IORedisInstrumentation({ requireParentSpan: true }),
    new KafkaJsInstrumentation(),
    new MongoDBInstrumentation({ requireParentSpan: true }),
    // Correlation (trace_id/span_id) comes from the logger's own mixin, which works with or without
    // the SDK; logs go to stdout, not through the OTel log pipeline.
    new PinoInstrumentation({ disableLogCorrelation: true, disableLogSending: true }),
  ];
}
