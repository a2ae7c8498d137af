/**
 * The process's metrics: one prom-client registry per process (prom-client's default one), so that
 * in `npm start`, where all five services share a process, every metric exists once and one
 * `/metrics` endpoint serves them all. Each metric is created on first use and then shared: two
 * callers asking for the same name get the same object (two YouTube clients, two gRPC servers).
 *
 * Every label here has a small, fixed set of values: route patterns (not URLs), gRPC method names,
 * topic and group names, cache names, tiers, operations, platform client names and endpoints. Video,
 * account, key and request ids are never labels: they would make a series per user.
 */
import client from 'prom-client';

export const registry = client.register;

/** Request and call latencies: 5 ms .. 30 s; 0.5, 1 and 2.5 s are the latency-SLO thresholds. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

function existing<T>(name: string): T | undefined {
  return registry.getSingleMetric(name) as T | undefined;
}

/** `collect`: run by prom-client before the metric is read (batched.ts hands its pending updates over). */
export function counter<L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[],
  collect?: () => void,
): client.Counter<L> {
  return (
    existing<client.Counter<L>>(name) ??
    new client.Counter({ name, help, labelNames, ...(collect ? { collect } : {}) })
  );
}

export function gauge<L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[],
  collect?: (this: client.Gauge<L>) => void | Promise<void>,
): client.Gauge<L> {
  return (
    existing<client.Gauge<L>>(name) ??
    new client.Gauge({ name, help, labelNames, ...(collect ? { collect } : {}) })
  );
}

export function histogram<L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[],
  buckets: readonly number[] = LATENCY_BUCKETS,
  collect?: () => void,
): client.Histogram<L> {
  return (
    existing<client.Histogram<L>>(name) ??
    new client.Histogram({ name, help, labelNames, buckets: [...buckets], ...(collect ? { collect } : {}) })
  );
}

let processMetrics = false;

/**
 * Node's own metrics (prom-client's default set): event-loop delay (`nodejs_eventloop_lag_*`,
 * sampled by `perf_hooks.monitorEventLoopDelay`), heap and external memory, GC pause durations by
 * kind, CPU, open handles and file descriptors. Idempotent.
 */
export function collectProcessMetrics(): void {
  if (processMetrics) return;
  processMetrics = true;
  client.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });
  // Gauges that prom-client names `_total` (a counter suffix): `promtool check metrics` rejects the
  // names, and the same numbers remain by type in nodejs_active_handles / _requests / _resources.
  for (const name of [
    'nodejs_active_handles_total',
    'nodejs_active_requests_total',
    'nodejs_active_resources_total',
  ]) {
    registry.removeSingleMetric(name);
  }
}

/** The exposition text of every metric of this process. */
export function scrape(): Promise<string> {
  return registry.metrics();
}

export const METRICS_CONTENT_TYPE = registry.contentType;
