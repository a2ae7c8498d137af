/**
 * Topic setup through the admin client: created when missing (with the bus's `retention.ms`),
 * retried while a broker gets ready.
 *
 * Topics that exist already keep their settings: an operator may have chosen their retention (with
 * `kafka-configs.sh`, or scripts/kafka-topics.sh with another KAFKA_TOPIC_RETENTION_MS), and a
 * service that rewrote it at every start would undo that choice, and would need the AlterConfigs
 * permission a managed cluster rarely grants. A retention that differs from the configured one is
 * logged once, at info, so that the difference is visible (docs/events.md, "Retention").
 */
import kafkajs, { type Admin } from 'kafkajs';
import { backoffDelay } from '../../backoff.ts';
import type { KafkaConnections } from './connections.ts';
import type { Logger } from '../../logger.ts';
import { withTimeout } from './util.ts';

/** Bound on the retention report's one request: it must not hold up a start or a first publish. */
const RETENTION_REPORT_TIMEOUT_MS = 5_000;

// kafkajs is CommonJS, and Node's named-export detection does not see this enum.
const { ConfigResourceTypes } = kafkajs;

export interface TopicSetupOptions {
  connections: KafkaConnections;
  /** Partitions of topics created here. */
  partitions: number;
  /** Default: the broker's default.replication.factor. */
  replicationFactor: number | undefined;
  /** How long `ensureExact` keeps retrying. */
  topicSetupTimeoutMs: number;
  /** `retention.ms` of topics created here; undefined: the broker's default. */
  retentionMs: number | undefined;
  logger: Logger | undefined;
  /** A closed bus stops retrying. */
  isClosed(): boolean;
}

export interface TopicSetup {
  /**
   * Creates exactly these topics if missing (no `.dlq` twins), retrying within
   * `topicSetupTimeoutMs`. A broker that just started refuses connections, or answers metadata
   * requests mid leader election, for a few seconds; kafkajs's own retries give up sooner (and its
   * `listTopics` then fails with a TypeError on the missing metadata), which made a gateway pod
   * exit at start in a fresh cluster.
   */
  ensureExact(names: readonly string[]): Promise<void>;
  /** Checked again next time: a broker that came back without its data lost the topic too. */
  forget(topic: string): void;
}

export function createTopicSetup(options: TopicSetupOptions): TopicSetup {
  const { connections, logger, retentionMs } = options;
  const knownTopics = new Set<string>();
  /** Topics whose retention was compared already: each is reported at most once per bus. */
  const retentionCompared = new Set<string>();

  const reportOtherRetention = async (admin: Admin, existing: readonly string[]): Promise<void> => {
    const unchecked = existing.filter((t) => !retentionCompared.has(t));
    if (retentionMs === undefined || unchecked.length === 0) return;
    for (const t of unchecked) retentionCompared.add(t);
    const wanted = String(retentionMs);
    try {
      const { resources } = await withTimeout(
        admin.describeConfigs({
          includeSynonyms: false,
          resources: unchecked.map((name) => ({
            type: ConfigResourceTypes.TOPIC,
            name,
            configNames: ['retention.ms'],
          })),
        }),
        RETENTION_REPORT_TIMEOUT_MS,
        'kafka describeConfigs',
      );
      const differing: Record<string, string> = {};
      for (const resource of resources) {
        const value = resource.configEntries.find((e) => e.configName === 'retention.ms')?.configValue;
        if (value !== undefined && value !== wanted) differing[resource.resourceName] = value;
      }
      if (Object.keys(differing).length === 0) return;
      logger?.info(
        { retentionMs, topics: differing },
        'kafka topics exist with another retention.ms; left as they are (docs/events.md, "Retention")',
      );
    } catch (error) {
      // Only a report: a cluster that refuses DescribeConfigs (an ACL) still gets its topics used.
      logger?.debug({ err: error, topics: unchecked }, 'kafka topic retention not compared');
    }
  };

  const createMissing = async (wanted: readonly string[]): Promise<void> => {
    const current = connections.getAdmin();
    try {
      const admin = await current;
      const existing = new Set(await admin.listTopics());
      const missing = wanted.filter((t) => !existing.has(t));
      await reportOtherRetention(
        admin,
        wanted.filter((t) => existing.has(t)),
      );
      if (missing.length === 0) return;
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((topic) => ({
          topic,
          numPartitions: options.partitions,
          ...(options.replicationFactor === undefined
            ? {}
            : { replicationFactor: options.replicationFactor }),
          ...(retentionMs === undefined
            ? {}
            : { configEntries: [{ name: 'retention.ms', value: String(retentionMs) }] }),
        })),
      });
    } catch (error) {
      // Another process may have created them between listTopics and createTopics.
      if (String((error as Error).message).includes('already exists')) return;
      connections.dropAdmin(current);
      throw error;
    }
  };

  return {
    async ensureExact(names) {
      const unknown = [...new Set(names)].filter((t) => !knownTopics.has(t));
      if (unknown.length === 0) return;
      const deadline = Date.now() + options.topicSetupTimeoutMs;
      for (let attempt = 1; ; attempt++) {
        try {
          await createMissing(unknown);
          break;
        } catch (error) {
          const delay = backoffDelay({ baseMs: 250, maxMs: 2_000 }, attempt);
          if (!brokerNotReadyYet(error) || options.isClosed() || Date.now() + delay >= deadline) throw error;
          logger?.warn(
            { err: error, topics: unknown, attempt, retryInMs: delay },
            'kafka topic setup failed; retrying (a broker that just started may not be ready yet)',
          );
          await new Promise((resolve) => setTimeout(resolve, delay));
        }
      }
      for (const t of unknown) knownTopics.add(t);
    },

    forget(topic) {
      knownTopics.delete(topic);
    },
  };
}

/**
 * What a broker that is still starting looks like: the address refuses connections or does not
 * resolve yet (compose, a fresh cluster), or the broker answers mid leader election (and kafkajs's
 * `listTopics` then fails with a TypeError on the missing metadata) or before a topic it just created
 * is in its metadata. Anything else, a TLS
 * certificate or a SASL password refused above all, is a setting that waiting will not fix: it fails
 * at once. kafkajs wraps the first error in `cause` when its own retries run out.
 */
export function brokerNotReadyYet(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return true;
    if (e instanceof TypeError) return true;
    // A topic just created is not in the answering broker's metadata yet (KRaft spreads it a moment
    // later); createTopics' waitForLeaders retries only LEADER_NOT_AVAILABLE, so this reached us and
    // made a gateway exit at start on a fresh broker. The next attempt finds the topic listed.
    if ((e as { type?: unknown }).type === 'UNKNOWN_TOPIC_OR_PARTITION') return true;
    if (/leader|election|LEADER_NOT_AVAILABLE|NOT_CONTROLLER|COORDINATOR_NOT_AVAILABLE/i.test(e.message))
      return true;
  }
  return false;
}
