/**
 * The metric updates of the hot paths (every HTTP request, every gRPC call, every cache lookup),
 * kept as plain numbers where they happen and handed to prom-client in batches.
 *
 * Why: a prom-client `inc` or `observe` hashes and validates its labels and updates a map on every
 * call, interleaved with everything else a request does. Handed over 1,024 at a time, in one tight
 * loop, the same updates cost less: on `npm start`'s cached extract throughput rose by
 * 5 to 7% (one process under one continuous load, batching switched off and on every second: 74
 * pairs of seconds, unbatched/batched 0.952 median, 0.935 mean). The uncached path showed no
 * difference (0.986, 1.012): its cost is elsewhere.
 *
 * Nothing is lost or late for a reader: each underlying metric has a `collect` that prom-client
 * runs before every scrape and every `get()`, and it hands over what is pending first. At most
 * MAX_PENDING updates wait per batched metric (then they are handed over at once), so memory is
 * bounded by that and by the labels' fixed values.
 */
import type { Counter, Histogram } from 'prom-client';
import { LATENCY_BUCKETS, counter, histogram } from './registry.ts';

/** Updates held before they are handed to prom-client in one go. */
export const MAX_PENDING = 1_024;

interface Series<L extends string> {
  labels: Record<L, string>;
  /** Counter: the one pending sum. Histogram: every pending observation. */
  values: number[];
}

/** One label set of a batched metric, held by a caller that records into it often. */
export interface BatchedSeries {
  /** One increment (counter) or observation (histogram) of this series. */
  record(value: number): void;
}

export interface BatchedMetric<L extends string> {
  /**
   * One increment (counter) or observation (histogram) of the series `key` stands for. `key` must
   * name one label set (e.g. its values joined); `labels` is called only for a key not seen before.
   */
  record(key: string, labels: () => Record<L, string>, value: number): void;
  /**
   * The series `key` stands for, to record into without looking it up (or building its key) on
   * every update: what the per-request and per-call recorders keep, by their labels' values.
   */
  series(key: string, labels: () => Record<L, string>): BatchedSeries;
  /** Hands every pending update to prom-client (also done by the metric's `collect`). */
  flush(): void;
}

function batched<L extends string, M extends Counter<L> | Histogram<L>>(
  kind: 'counter' | 'histogram',
  metric: (collect: () => void) => M,
  apply: (metric: M, series: Series<L>) => void,
): BatchedMetric<L> {
  const series = new Map<string, Series<L>>();
  let pending = 0;
  let target: M | undefined;
  const flush = (): void => {
    if (pending === 0 || target === undefined) return;
    pending = 0;
    for (const s of series.values()) {
      if (s.values.length === 0) continue;
      apply(target, s);
      s.values.length = 0;
    }
  };
  const seriesOf = (key: string, labels: () => Record<L, string>): Series<L> => {
    let s = series.get(key);
    if (s === undefined) {
      s = { labels: labels(), values: [] };
      series.set(key, s);
    }
    return s;
  };
  const add = (s: Series<L>, value: number): void => {
    // prom-client would throw on these at its own call; here, before they are held.
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    if (kind === 'counter' && value < 0) throw new Error('It is not possible to decrease a counter');
    // The metric is registered (with its collect) by the first update of a batch, so a scrape in
    // between finds it, and one that was never updated stays out of the exposition as before.
    if (pending === 0) target = metric(flush);
    if (kind === 'histogram' || s.values.length === 0) s.values.push(value);
    else s.values[0] = (s.values[0] ?? 0) + value;
    if (++pending >= MAX_PENDING) flush();
  };
  return {
    record(key, labels, value) {
      add(seriesOf(key, labels), value);
    },
    series(key, labels) {
      const s = seriesOf(key, labels);
      return { record: (value) => add(s, value) };
    },
    flush,
  };
}

/** A counter (`registry.ts`'s, created with its collect on first use) whose increments are batched. */
export function batchedCounter<L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[],
): BatchedMetric<L> {
  return batched<L, Counter<L>>(
    'counter',
    (collect) => counter(name, help, labelNames, collect),
    (metric, s) => metric.inc(s.labels, s.values[0] ?? 0),
  );
}

/**
 * A histogram whose observations are batched, and optionally the counter of the same label set
 * counted from them (`subx_http_requests_total` is the duration histogram's count, kept under its
 * own name for the alerts that read it).
 */
export function batchedHistogram<L extends string>(
  name: string,
  help: string,
  labelNames: readonly L[],
  options: { buckets?: readonly number[]; countAlsoAs?: { name: string; help: string } } = {},
): BatchedMetric<L> {
  const { countAlsoAs } = options;
  let count: Counter<L> | undefined;
  return batched<L, Histogram<L>>(
    'histogram',
    (collect) => {
      if (countAlsoAs) count = counter(countAlsoAs.name, countAlsoAs.help, labelNames, collect);
      return histogram(name, help, labelNames, options.buckets ?? LATENCY_BUCKETS, collect);
    },
    (metric, s) => {
      count?.inc(s.labels, s.values.length);
      for (const value of s.values) metric.observe(s.labels, value);
    },
  );
}
