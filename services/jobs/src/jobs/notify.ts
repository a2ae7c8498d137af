/**
 * What the world hears about a job: lifecycle events on the bus for internal consumers
 * (`jobs.lifecycle.v1`, docs/events.md) and, when the job names one, a signed webhook to the
 * client when it ends. Terminal notices are at least once: a job is marked `notified` only after
 * both were handed on, and the runner's sweeper retries any terminal job that is not (a gateway
 * that died in between). Consumers tell repeats apart by the event id `<job_id>:<type>`; the
 * webhook outbox drops a second enqueue of the same job and event itself.
 */
import type { Logger } from '@subx/ports';
import type { JobDoc } from './model.ts';
import { jobView } from './model.ts';
import type { JobStore } from './store.ts';
import type { WebhookDeliveries, WebhookEventType } from '../webhooks/index.ts';

export type JobEventType = 'job.created' | 'job.started' | 'job.completed' | 'job.failed' | 'job.canceled';
export interface JobEventSink {
  publish(type: JobEventType, job: JobDoc): Promise<void>;
}

/** The webhook outbox's side, as the notifier needs it (src/webhooks). */
export type JobWebhookSink = Pick<WebhookDeliveries, 'enqueue'>;

export interface JobNotifier {
  created(job: JobDoc): Promise<void>;
  started(job: JobDoc): Promise<void>;
  /** A terminal job: its event and webhook, then `notified`. Never throws (the sweeper retries). */
  notify(job: JobDoc): Promise<void>;
}

export function createJobNotifier(deps: {
  store: JobStore;
  events: JobEventSink;
  webhooks: JobWebhookSink | null;
  logger: Pick<Logger, 'warn'>;
}): JobNotifier {
  // Progress events are best effort: a job runs whether or not the bus takes them.
  const bestEffort = async (type: JobEventType, job: JobDoc) => {
    try {
      await deps.events.publish(type, job);
    } catch (err) {
      deps.logger.warn({ err, job_id: job._id, type }, 'publishing a job event failed');
    }
  };
  return {
    created: (job) => bestEffort('job.created', job),
    started: (job) => bestEffort('job.started', job),
    async notify(job) {
      if (job.status !== 'completed' && job.status !== 'failed' && job.status !== 'canceled') return;
      const event: WebhookEventType = `job.${job.status}`;
      try {
        await deps.events.publish(event, job);
        if (job.webhook_url && deps.webhooks) {
          await deps.webhooks.enqueue({
            accountId: job.account_id,
            url: job.webhook_url,
            subject: job._id,
            event,
            // The job object, as GET /api/v1/jobs/{id} shows it (its webhook state aside).
            data: { ...jobView(job) },
          });
        }
        await deps.store.markNotified(job._id);
      } catch (err) {
        deps.logger.warn(
          { err, job_id: job._id, event },
          'handing on a job notice failed; the sweeper retries',
        );
      }
    },
  };
}
