export {
  registry,
  counter,
  gauge,
  histogram,
  collectProcessMetrics,
  scrape,
  LATENCY_BUCKETS,
  METRICS_CONTENT_TYPE,
} from './registry.ts';
export { startMetricsServer } from './server.ts';
export type { MetricsServer, StartMetricsServerOptions } from './server.ts';
export * from './http.ts';
export * from './grpc.ts';
export * from './caches.ts';
export * from './bus.ts';
export * from './upstream.ts';
