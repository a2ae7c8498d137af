/**
 * The event bus's names, defined once: every topic and consumer group with the environment
 * variable that renames it and its default. The producing and the consuming service read the same
 * variable (e.g. CREDIT_USAGE_TOPIC on the gateway and on billing), so renaming a topic is one
 * value set on both sides. docs/events.md describes the messages.
 */
export interface BusName {
  /** The environment variable that overrides the name, the same on every side. */
  readonly env: string;
  readonly default: string;
}

export const TOPICS = {
  /** Gateway → billing: one message per credit charge or refund (creditUsageV1). */
  creditUsage: { env: 'CREDIT_USAGE_TOPIC', default: 'billing.credit-usage.v1' },
  /** Gateway → billing: one message per counted request (requestUsageV1). */
  requestUsage: { env: 'REQUEST_USAGE_TOPIC', default: 'billing.request-usage.v1' },
  /** Gateway → extractor workers: batch/playlist extraction jobs (extractJobV1). */
  extractJobs: { env: 'EXTRACT_JOBS_TOPIC', default: 'extract.jobs.v1' },
  /**
   * Gateway → extractor bulk workers: the videos of bulk jobs (extractJobV1, as extractJobs; the
   * results come back on extractResults). A topic and group of their own, so that one account's
   * job of thousands of videos queues behind itself, never in front of interactive batch and
   * playlist requests.
   */
  extractBulkJobs: { env: 'EXTRACT_BULK_JOBS_TOPIC', default: 'extract.bulk-jobs.v1' },
  /** Extractor workers → gateway: results of jobs naming no reply topic. */
  extractResults: { env: 'EXTRACT_RESULTS_TOPIC', default: 'extract.results.v1' },
  /** Gateway → internal consumers: bulk job lifecycle events (jobLifecycleV1), key = account id. */
  jobEvents: { env: 'JOB_EVENTS_TOPIC', default: 'jobs.lifecycle.v1' },
  /** Gateway → internal consumers: watch lifecycle events (watchLifecycleV1), key = account id. */
  watchEvents: { env: 'WATCH_EVENTS_TOPIC', default: 'watches.lifecycle.v1' },
  /**
   * Gateway → internal consumers: the accounts' audit log (auditEventV1), one message per recorded
   * change or refusal, key = account id, through an outbox (services/gateway/src/audit/).
   */
  auditEvents: { env: 'AUDIT_EVENTS_TOPIC', default: 'audit.v1' },
  /**
   * Gateway → billing and every consumer of usage or audit events: a workspace was deleted
   * (accountDeletedV1), key = account id, through an outbox (services/gateway/src/deletion/).
   */
  accountEvents: { env: 'ACCOUNT_EVENTS_TOPIC', default: 'accounts.v1' },
} as const satisfies Record<string, BusName>;

export const CONSUMER_GROUPS = {
  /**
   * The extractor's workers. The gateway names it too (it checks that workers are there before
   * publishing a job), so both read EXTRACT_WORKERS_GROUP.
   */
  extractWorkers: { env: 'EXTRACT_WORKERS_GROUP', default: 'extractor-workers' },
  /**
   * The extractor's bulk workers, on extractBulkJobs. A group apart from extractWorkers, so that
   * their lag and their offsets are the bulk jobs' own.
   */
  extractBulkWorkers: { env: 'EXTRACT_BULK_WORKERS_GROUP', default: 'extractor-bulk-workers' },
  /** Billing's ledger of credit usage (its KAFKA_GROUP_ID). */
  billingLedger: { env: 'KAFKA_GROUP_ID', default: 'billing-ledger' },
  /** Billing's consumer of accountEvents: it pseudonymises a deleted workspace's ledger. */
  billingAccountDeletions: { env: 'KAFKA_ACCOUNT_DELETIONS_GROUP_ID', default: 'billing-account-deletions' },
} as const satisfies Record<string, BusName>;
