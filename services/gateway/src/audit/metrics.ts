/**
 * The audit log's own metrics (a metric one service records lives in that service). Names follow
 * Prometheus conventions (`_total` counters), made with service-kit's registry like every metric;
 * the catalogue is in packages/service-kit/README.md.
 */
import { counter } from '@subx/service-kit';

/** An event that could not be stored: the action it recorded stood, the log lacks it. */
export function countAuditWriteFailure(): void {
  counter(
    'subx_audit_write_failures_total',
    'Audit events that could not be stored (the action stood; the error is logged with its action and account).',
    [],
  ).inc();
}

/** Events older than AUDIT_RETENTION_DAYS deleted by the retention sweep. */
export function countAuditEventsSwept(count: number): void {
  counter(
    'subx_audit_events_swept_total',
    'Audit events deleted by the retention sweep (older than AUDIT_RETENTION_DAYS).',
    [],
  ).inc(count);
}
