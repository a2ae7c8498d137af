/**
 * Why service-kit records metrics with prom-client rather than the OpenTelemetry SDK's Prometheus
 * exporter (run: node_modules/.bin/node scripts/bench/metrics-record.ts). Both record the same work:
 * per request one counter increment and one histogram observation with two labels (route, status
 * class), over 40 label sets, and then one scrape rendered as Prometheus text. Baseline: the same
 * loop incrementing a plain Map, so the ratios compare cost per recorded request on this machine.
 * The OTel packages are the ones @opentelemetry/sdk-node already brings (resolved through it).
 */
import { createRequire } from 'node:module';
import client from 'prom-client';

const requireFromSdk = createRequire(createRequire(import.meta.url).resolve('@opentelemetry/sdk-node'));
// The few parts used here, typed by hand: these packages are not direct dependencies of the root.
interface OtelInstrument {
  add(value: number, attributes: Record<string, string>): void;
  record(value: number, attributes: Record<string, string>): void;
}
interface OtelExporter {
  collect(): Promise<{ resourceMetrics: unknown }>;
}
const sdkMetrics = requireFromSdk('@opentelemetry/sdk-metrics') as {
  MeterProvider: new (options: { readers: OtelExporter[] }) => {
    getMeter(name: string): {
      createCounter(name: string): OtelInstrument;
      createHistogram(name: string, options: { unit: string }): OtelInstrument;
    };
    shutdown(): Promise<void>;
  };
};
const promExporter = requireFromSdk('@opentelemetry/exporter-prometheus') as {
  PrometheusExporter: new (options: { preventServerStart: boolean }) => OtelExporter;
  PrometheusSerializer: new () => { serialize(resourceMetrics: unknown): string };
};

const OPS = 1_000_000;
const RUNS = 7;
const routes = Array.from({ length: 20 }, (_, i) => `/api/v1/route${i}`);
const labels = routes.flatMap((route) => ['2xx', '4xx'].map((status_class) => ({ route, status_class })));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function time(op: () => unknown): Promise<number> {
  for (let i = 0; i < 2; i++) await op();
  const runs: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await op();
    runs.push(performance.now() - t0);
  }
  return median(runs);
}

// Baseline: the cheapest possible bookkeeping of the same events.
const plain = new Map<string, number>();
const baseline = await time(() => {
  for (let i = 0; i < OPS; i++) {
    const l = labels[i % labels.length]!;
    const key = `${l.route}|${l.status_class}`;
    plain.set(key, (plain.get(key) ?? 0) + 1);
  }
});

const registry = new client.Registry();
const promCounter = new client.Counter({
  name: 'bench_requests_total',
  help: 'bench',
  labelNames: ['route', 'status_class'],
  registers: [registry],
});
const promHistogram = new client.Histogram({
  name: 'bench_request_duration_seconds',
  help: 'bench',
  labelNames: ['route', 'status_class'],
  registers: [registry],
});
const promRecord = await time(() => {
  for (let i = 0; i < OPS; i++) {
    const l = labels[i % labels.length]!;
    promCounter.inc(l);
    promHistogram.observe(l, (i % 100) / 1000);
  }
});
const promScrape = await time(() => registry.metrics());

const exporter = new promExporter.PrometheusExporter({ preventServerStart: true });
const provider = new sdkMetrics.MeterProvider({ readers: [exporter] });
const meter = provider.getMeter('bench');
const otelCounter = meter.createCounter('bench_requests');
const otelHistogram = meter.createHistogram('bench_request_duration', { unit: 's' });
const otelRecord = await time(() => {
  for (let i = 0; i < OPS; i++) {
    const l = labels[i % labels.length]!;
    otelCounter.add(1, l);
    otelHistogram.record((i % 100) / 1000, l);
  }
});
const serializer = new promExporter.PrometheusSerializer();
const otelScrape = await time(async () => {
  const { resourceMetrics } = await exporter.collect();
  return serializer.serialize(resourceMetrics);
});
await provider.shutdown();

const perOpNs = (ms: number) => ((ms * 1e6) / OPS).toFixed(0);
console.log(`${OPS} requests recorded (counter + histogram, ${labels.length} label sets), median of ${RUNS}`);
console.log(`  baseline Map:         ${baseline.toFixed(1)} ms (${perOpNs(baseline)} ns/request)`);
console.log(
  `  prom-client:          ${promRecord.toFixed(1)} ms (${perOpNs(promRecord)} ns/request, ${(promRecord / baseline).toFixed(1)}x baseline)`,
);
console.log(
  `  OTel sdk-metrics:     ${otelRecord.toFixed(1)} ms (${perOpNs(otelRecord)} ns/request, ${(otelRecord / baseline).toFixed(1)}x baseline)`,
);
console.log(`  OTel / prom-client:   ${(otelRecord / promRecord).toFixed(2)}x per recorded request`);
console.log(
  `  one scrape: prom-client ${promScrape.toFixed(2)} ms, OTel exporter ${otelScrape.toFixed(2)} ms (${(otelScrape / promScrape).toFixed(2)}x)`,
);
