/**
 * `subx_jobs_backlog`: the jobs queued or running, across every replica (read from the store at
 * each scrape, so every replica reports the same number). What an autoscaler of the job service
 * watches (the chart's KEDA ScaledObject, `max(subx_jobs_backlog)`): work waiting, not CPU.
 */
import type { DocumentStore } from '@subx/ports';
import { gauge } from '@subx/service-kit';
import { JOBS_COLLECTION } from './store.ts';
import type { JobDoc } from './model.ts';

/** The store the gauge reads: the process's job service (the registry is per process). */
let backlogSource: (() => Promise<number>) | undefined;

export function jobBacklogGauge(store: DocumentStore): () => void {
  const jobs = store.collection<JobDoc>(JOBS_COLLECTION);
  const source = () => jobs.countDocuments({ status: { $in: ['queued', 'running'] } });
  backlogSource = source;
  gauge(
    'subx_jobs_backlog',
    'Bulk jobs queued or running, across every replica (the job service scales on it).',
    [],
    async function () {
      // A scrape with the store unreachable leaves the last value rather than failing the scrape.
      const open = await backlogSource?.().catch(() => null);
      if (open !== undefined && open !== null) this.set(open);
    },
  );
  return () => {
    if (backlogSource === source) backlogSource = undefined;
  };
}
