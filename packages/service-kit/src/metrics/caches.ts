/**
 * Cache lookups, hit or miss, by the cache's name.
 * Names follow Prometheus conventions (`_total` counters, `_seconds` units); the catalogue is in
 * packages/service-kit/README.md, the alerts that read them in deploy/helm/subx/templates/prometheusrule.yaml.
 */
import { batchedCounter } from './batched.ts';
import type { BatchedSeries } from './batched.ts';

// Every cache lookup records here: batched (batched.ts).
const cacheLookups = batchedCounter(
  'subx_cache_requests_total',
  'Cache lookups, by cache and result (hit or miss).',
  ['cache', 'result'],
);

/** One cache lookup: `cache` is the cache's name (transcript, metadata, comments, summary, ...). */
export function countCacheLookup(cache: string, hit: boolean): void {
  const result = hit ? 'hit' : 'miss';
  let byResult = cacheSeries.get(cache);
  if (byResult === undefined) {
    const seriesOf = (result: string) => cacheLookups.series(`${cache} ${result}`, () => ({ cache, result }));
    cacheSeries.set(cache, (byResult = { hit: seriesOf('hit'), miss: seriesOf('miss') }));
  }
  byResult[result].record(1);
}

/** The two series of each cache (bounded: caches are named in the code). */
const cacheSeries = new Map<string, { hit: BatchedSeries; miss: BatchedSeries }>();

/**
 * A `createJsonCache({ onLookup })` hook: the cache is named by the key's first segment
 * (`transcript:v1:<id>` → transcript), which the code chooses, so the label stays bounded.
 */
export function cacheLookupMetrics(): (key: string, hit: boolean) => void {
  return (key, hit) => countCacheLookup(key.split(':', 1)[0] || 'unnamed', hit);
}
