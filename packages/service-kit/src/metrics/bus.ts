/**
 * The event bus and what rides on it: consumer lag, fan-out deadlines, the outbox backlog and the billing ledger's events.
 * Names follow Prometheus conventions (`_total` counters, `_seconds` units); the catalogue is in
 * packages/service-kit/README.md, the alerts that read them in deploy/helm/subx/templates/prometheusrule.yaml.
 */
import { counter, gauge } from './registry.ts';

/**
 * What the event-bus adapters of @subx/ports report (their `BusObserver`): published messages by
 * topic, handled deliveries by topic, group and outcome, and dead-lettered messages.
 */
export function busMetrics(): {
  published(topic: string, count: number): void;
  handled(topic: string, groupId: string, outcome: 'ok' | 'retry' | 'failed'): void;
  deadLettered(topic: string, groupId: string): void;
  consumerRevived(groupId: string): void;
  lagSource(read: () => Promise<LagReport>): void;
} {
  const produced = counter(
    'subx_bus_messages_produced_total',
    'Messages published to the event bus, by topic.',
    ['topic'],
  );
  const consumed = counter(
    'subx_bus_messages_consumed_total',
    'Deliveries handled by consumers, by topic, group and outcome (ok, retry, failed).',
    ['topic', 'group', 'outcome'],
  );
  const dlq = counter(
    'subx_bus_dead_lettered_total',
    'Messages moved to <topic>.dlq after their last failed attempt, by topic and group.',
    ['topic', 'group'],
  );
  const revived = counter(
    'subx_bus_consumer_restarts_total',
    'Consumers started again by the adapter after kafkajs gave up on them (a crash it does not restart), by group.',
    ['group'],
  );
  return {
    published: (topic, count) => produced.inc({ topic }, count),
    consumerRevived: (group) => revived.inc({ group }),
    handled: (topic, group, outcome) => consumed.inc({ topic, group, outcome }),
    deadLettered: (topic, group) => dlq.inc({ topic, group }),
    lagSource: (read) => void registerConsumerLag(read),
  };
}

type LagReport = readonly { groupId: string; topic: string; lag: number }[];
const lagSources = new Set<() => Promise<LagReport>>();

/** A scrape-time read must neither hang nor fail the scrape: bounded, and failures read as absent. */
async function bounded<T>(read: () => Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      read(),
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), ms);
      }),
    ]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/** Consumer lag, read at scrape time from `source` (the Kafka adapter's `consumerLag`), 2 s bound. */
export function registerConsumerLag(source: () => Promise<LagReport>): () => void {
  lagSources.add(source);
  gauge(
    'subx_kafka_consumer_lag',
    'Messages behind the partition end for the consumer groups of this process, by group and topic.',
    ['group', 'topic'],
    async function collect() {
      const reports = await Promise.all([...lagSources].map((s) => bounded(s, 2_000)));
      this.reset();
      for (const { groupId, topic, lag } of reports.flatMap((r) => r ?? [])) {
        this.set({ group: groupId, topic }, lag);
      }
    },
  );
  return () => lagSources.delete(source);
}

/** Batch/playlist items answered TIMEOUT: `fanout` is 'bus' (Kafka jobs) or 'direct' (gRPC calls). */
export function countFanOutDeadlineMissed(fanout: 'bus' | 'direct', items: number): void {
  if (items <= 0) return;
  counter(
    'subx_fanout_deadline_missed_total',
    'Batch/playlist items that had no result by their deadline, by fan-out path.',
    ['fanout'],
  ).inc({ fanout }, items);
}

interface OutboxBacklog {
  pending: number;
  oldestAgeSeconds: number;
}
let outboxSource: (() => Promise<OutboxBacklog>) | undefined;
let outboxRead: Promise<OutboxBacklog | undefined> | undefined;

/**
 * One read per scrape for both gauges (a scrape starts every metric's collect before awaiting any,
 * so the second gauge joins the first one's read), bounded at 2 s; a failed read leaves the last values.
 */
function readOutbox(): Promise<OutboxBacklog | undefined> {
  const source = outboxSource;
  if (!source) return Promise.resolve(undefined);
  outboxRead ??= bounded(source, 2_000).finally(() => {
    outboxRead = undefined;
  });
  return outboxRead;
}

/** Outbox backlog, read at scrape time: entries not yet published and the age of the oldest. */
export function registerOutboxBacklog(source: () => Promise<OutboxBacklog>): () => void {
  outboxSource = source;
  outboxRead = undefined;
  gauge(
    'subx_outbox_pending',
    'Outbox entries (credit-usage events and request-usage reports) committed but not yet published.',
    [],
    async function () {
      const backlog = await readOutbox();
      if (backlog) this.set(backlog.pending);
    },
  );
  gauge(
    'subx_outbox_oldest_age_seconds',
    'Age of the oldest outbox entry not yet published (0 when none).',
    [],
    async function () {
      const backlog = await readOutbox();
      if (backlog) this.set(backlog.oldestAgeSeconds);
    },
  );
  return () => {
    if (outboxSource === source) outboxSource = undefined;
  };
}

export function countBillingEvent(result: 'applied' | 'duplicate' | 'rejected'): void {
  counter(
    'subx_billing_events_total',
    'Credit-usage events seen by the billing ledger: applied, duplicate (deduplicated) or rejected.',
    ['result'],
  ).inc({ result });
}
