// Batched metrics against prom-client's own: the same updates give the same exposition text, a
// reader always sees every update, and at most MAX_PENDING updates wait.
import client from 'prom-client';
import { describe, expect, it } from 'vitest';
import { MAX_PENDING, batchedCounter, batchedHistogram } from './batched.ts';
import { LATENCY_BUCKETS, registry } from './registry.ts';

const LABELS = ['route', 'status_class'] as const;
type Label = (typeof LABELS)[number];

/** A deterministic spread of durations over every bucket (and past the last). */
function durations(n: number): number[] {
  let x = 7;
  return Array.from({ length: n }, () => {
    x = (x * 48_271) % 2_147_483_647;
    return (x % 40_000) / 1_000;
  });
}

const seriesOf = (i: number): Record<Label, string> => ({
  route: ['/a', '/b', '/c'][i % 3]!,
  status_class: i % 7 === 0 ? '5xx' : '2xx',
});
const keyOf = (labels: Record<Label, string>) => `${labels.route} ${labels.status_class}`;

/** The text of one metric, with its name replaced so that two can be compared. */
async function textOf(reg: client.Registry, name: string): Promise<string> {
  return (await reg.getSingleMetricAsString(name)).replaceAll(name, 'm');
}

/** A plain prom-client histogram with the batched ones' labels and buckets, in `reference`. */
const plainHistogram = (reference: client.Registry, name: string) =>
  new client.Histogram({
    name,
    help: 'h',
    labelNames: LABELS,
    buckets: [...LATENCY_BUCKETS],
    registers: [reference],
  });

describe('batched metrics', () => {
  it('a histogram (and the counter of its count) reads exactly as prom-client fed one by one', async () => {
    const reference = new client.Registry();
    const plain = plainHistogram(reference, 'ref_seconds');
    const plainCount = new client.Counter({
      name: 'ref_total',
      help: 'c',
      labelNames: LABELS,
      registers: [reference],
    });
    const batched = batchedHistogram('test_batched_seconds', 'h', LABELS, {
      countAlsoAs: { name: 'test_batched_total', help: 'c' },
    });
    // More than two batches' worth, so that both the full-batch hand-over and the collect run.
    durations(2 * MAX_PENDING + 37).forEach((seconds, i) => {
      const labels = seriesOf(i);
      plain.observe(labels, seconds);
      plainCount.inc(labels);
      batched.record(keyOf(labels), () => labels, seconds);
    });
    expect(await textOf(registry, 'test_batched_seconds')).toBe(await textOf(reference, 'ref_seconds'));
    expect(await textOf(registry, 'test_batched_total')).toBe(await textOf(reference, 'ref_total'));
    expect(await textOf(registry, 'test_batched_total')).toContain('m{route="/a",status_class="2xx"}');
  });

  it('a counter sums increments per series; a read in the middle of a batch sees every one', async () => {
    const calls = batchedCounter('test_batched_calls_total', 'c', LABELS);
    calls.record('/a 2xx', () => ({ route: '/a', status_class: '2xx' }), 1);
    calls.record('/a 2xx', () => ({ route: '/a', status_class: '2xx' }), 2.5);
    calls.record('/b 5xx', () => ({ route: '/b', status_class: '5xx' }), 1);
    const text = await registry.getSingleMetricAsString('test_batched_calls_total');
    expect(text).toContain('test_batched_calls_total{route="/a",status_class="2xx"} 3.5');
    expect(text).toContain('test_batched_calls_total{route="/b",status_class="5xx"} 1');
    // Read again with nothing new: nothing is counted twice.
    expect(await registry.getSingleMetricAsString('test_batched_calls_total')).toBe(text);
  });

  it('is not in the exposition before its first update', async () => {
    batchedCounter('test_batched_unused_total', 'c', LABELS);
    expect(registry.getSingleMetric('test_batched_unused_total')).toBeUndefined();
    expect(await registry.metrics()).not.toContain('test_batched_unused_total');
  });

  it('holds at most MAX_PENDING updates: a full batch is handed over without waiting for a reader', async () => {
    const lookups = batchedCounter('test_batched_lookups_total', 'c', ['cache'] as const);
    for (let i = 0; i < MAX_PENDING + 3; i++) lookups.record('x', () => ({ cache: 'x' }), 1);
    const metric = registry.getSingleMetric('test_batched_lookups_total') as client.Counter<'cache'> & {
      collect?: () => void;
    };
    // Without its collect, the metric shows what prom-client already holds: the first full batch.
    const collect = metric.collect;
    metric.collect = undefined;
    expect((await metric.get()).values).toEqual([expect.objectContaining({ value: MAX_PENDING })]);
    metric.collect = collect;
    expect((await metric.get()).values).toEqual([expect.objectContaining({ value: MAX_PENDING + 3 })]);
  });

  it('refuses what prom-client would refuse, when it is recorded rather than when it is read', () => {
    const h = batchedHistogram('test_batched_refused_seconds', 'h', LABELS);
    const c = batchedCounter('test_batched_refused_total', 'c', LABELS);
    const labels = () => ({ route: '/a', status_class: '2xx' });
    expect(() => h.record('k', labels, Number.NaN)).toThrow(TypeError);
    expect(() => c.record('k', labels, Number.POSITIVE_INFINITY)).toThrow(TypeError);
    expect(() => c.record('k', labels, -1)).toThrow(/decrease/);
    expect(() => c.series('k', labels).record(-1)).toThrow(/decrease/);
    expect(() => h.series('k', labels).record(Number.NaN)).toThrow(TypeError);
  });

  it('a held series records into the same series as its key, batched the same way', async () => {
    const reference = new client.Registry();
    const plain = plainHistogram(reference, 'ref_held_seconds');
    const batched = batchedHistogram('test_batched_held_seconds', 'h', LABELS);
    const held = new Map<string, ReturnType<typeof batched.series>>();
    durations(MAX_PENDING + 11).forEach((seconds, i) => {
      const labels = seriesOf(i);
      plain.observe(labels, seconds);
      const key = keyOf(labels);
      // Every other update through the held series, the rest by key: one series either way.
      if (i % 2 === 0) batched.record(key, () => labels, seconds);
      else {
        let series = held.get(key);
        if (!series) held.set(key, (series = batched.series(key, () => labels)));
        series.record(seconds);
      }
    });
    expect(await textOf(registry, 'test_batched_held_seconds')).toBe(
      await textOf(reference, 'ref_held_seconds'),
    );
  });
});
