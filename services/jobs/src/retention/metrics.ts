/**
 * The retention sweep's metrics (a metric one service records lives in that service). Names follow
 * Prometheus conventions; the catalogue is in packages/service-kit/README.md.
 */
import { counter, gauge } from '@subx/service-kit';

/** What the sweep removes, by kind: the `kind` label of subx_retention_swept_total. */
type SweptKind = 'job_results' | 'chunks' | 'watch_history';

export function retentionMetrics(): {
  swept(kind: SweptKind, count: number): void;
  ran(atMs: number): void;
} {
  const swept = counter(
    'subx_retention_swept_total',
    'What the retention sweep removed, by kind: job_results (result documents deleted), chunks (jobs whose chunks it closed), watch_history (seen and followed videos a watch forgot).',
    ['kind'],
  );
  const lastRun = gauge(
    'subx_retention_last_run_timestamp_seconds',
    'When the retention sweep of this process last completed a run (Unix seconds).',
    [],
  );
  return {
    swept: (kind, count) => {
      if (count > 0) swept.inc({ kind }, count);
    },
    ran: (atMs) => lastRun.set({}, atMs / 1000),
  };
}
