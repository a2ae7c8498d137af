/**
 * Bulk jobs (services/gateway/src/jobs).
 * Names follow Prometheus conventions (`_total` counters, `_seconds` units), made with service-kit's
 * registry like every metric; the catalogue is in packages/service-kit/README.md, the alerts that read them in deploy/helm/subx/templates/prometheusrule.yaml.
 */
import { counter, gauge } from '@subx/service-kit';

/**
 * Bulk jobs (services/gateway/src/jobs): jobs ending by status, items by outcome (ok or the error
 * code, a bounded set), and the jobs this gateway's runner holds now. No job or account ids.
 */
export function jobMetrics(): {
  finished(status: string): void;
  items(outcome: string, count: number): void;
  running(count: number): void;
} {
  const finished = counter('subx_jobs_finished_total', 'Bulk jobs that ended, by status.', ['status']);
  const items = counter(
    'subx_job_items_total',
    'Items of bulk jobs with a result, by outcome (ok or error code).',
    ['outcome'],
  );
  const running = gauge('subx_jobs_running', "Bulk jobs this gateway's runner is working on now.", []);
  return {
    finished: (status) => finished.inc({ status }),
    items: (outcome, count) => items.inc({ outcome }, count),
    running: (count) => running.set({}, count),
  };
}
