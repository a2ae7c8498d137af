export {
  registry,
  collectProcessMetrics,
  scrape,
  LATENCY_BUCKETS,
  METRICS_CONTENT_TYPE,
} from './registry.ts';
export { startMetricsServer } from './server.ts';
export type { MetricsServer, StartMetricsServerOptions } from './server.ts';
export * from './instruments.ts';
export * from './upstream.ts';
