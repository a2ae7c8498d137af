import { systemClock, type Clock } from './clock.ts';
import { createInMemoryDocumentStore } from './document-store/in-memory.ts';
import { createMongoDocumentStore } from './document-store/mongo.ts';
import type { DocumentStore } from './document-store/port.ts';
import { createInProcessEventBus } from './event-bus/in-process.ts';
import { createKafkaEventBus, type KafkaConsumerTuning } from './event-bus/kafka.ts';
import type { Logger } from './logger.ts';
import type { KafkaSecurity } from './event-bus/kafka-security.ts';
import type { BusObserver, EventBus } from './event-bus/port.ts';
import type { ValueSchemaIds } from './event-bus/schema-registry.ts';
import { createInMemoryKeyValueStore } from './key-value/in-memory.ts';
import type { KeyValueStore } from './key-value/port.ts';
import { createRedisKeyValueStore } from './key-value/redis.ts';

export interface AdaptersConfig {
  /** Redis URL; absent or empty: the in-memory key-value store. */
  redisUrl?: string | undefined;
  /** Kafka brokers (array or comma-separated); absent or empty: the in-process bus. */
  kafkaBrokers?: string | readonly string[] | undefined;
  /** MongoDB/FerretDB URL; absent or empty: the in-memory document store. */
  mongoUrl?: string | undefined;
  /** Database name. Default 'subx'. */
  mongoDb?: string | undefined;
  clientId: string;
  /** Clock of the in-memory key-value store's expiry. */
  clock?: Clock;
  logger?: Logger;
  kafkaConsumer?: KafkaConsumerTuning;
  /** Metrics of the bus (service-kit's `busMetrics()`). */
  busObserver?: BusObserver;
  /** TLS and SASL to Kafka (service-kit's `kafkaSecurityFromConfig`). */
  kafkaSecurity?: KafkaSecurity;
  /**
   * `retention.ms` of the Kafka topics the bus creates (service-kit's KAFKA_TOPIC_RETENTION_MS);
   * absent: the broker's default.
   */
  kafkaTopicRetentionMs?: number | undefined;
  /** Schema id headers per topic (`registerTopicSchemas`), for the Kafka bus; filled at start-up. */
  valueSchemaIds?: ValueSchemaIds;
}

export interface Adapters {
  bus: EventBus;
  store: DocumentStore;
  kv: KeyValueStore;
  kind: { bus: 'kafka' | 'in-process'; store: 'mongo' | 'in-memory'; kv: 'redis' | 'in-memory' };
  /**
   * The configured engines (not the embedded ones), each with a bounded reachability check: what a
   * service waits for before it starts (service-kit's `waitForDependencies`).
   */
  dependencies: readonly Dependency[];
  /** Closes all three; the bus first, so in-flight handlers can still write. */
  close(): Promise<void>;
}

/** An engine a service needs, and how to ask it whether it answers. */
export interface Dependency {
  name: 'kafka' | 'mongo' | 'redis';
  /** Where it is, without credentials: `kafka:9092`, `mongo:27017`. */
  target: string;
  /** The variable that points at it. */
  variable: 'KAFKA_BROKERS' | 'MONGO_URL' | 'REDIS_URL';
  /** Resolves when the engine answers; rejects (bounded by the adapter's own timeouts) when not. */
  check(): Promise<void>;
}

/** `host:port` of a URL (no user, password or database), or the scheme alone when it does not parse. */
function hostsOf(url: string): string {
  // mongodb://user:pass@a:27017,b:27017/db?x=y: URL cannot parse several hosts, so cut by hand.
  const afterScheme = url.replace(/^[a-z+]+:\/\//i, '');
  const authority = afterScheme.split(/[/?#]/, 1)[0] ?? '';
  return authority.slice(authority.lastIndexOf('@') + 1) || url.split(':', 1)[0] || 'unknown';
}

/** Real adapters for configured engines, embedded ones for the rest. */
export function createAdapters(config: AdaptersConfig): Adapters {
  const brokers = (
    typeof config.kafkaBrokers === 'string'
      ? config.kafkaBrokers.split(',')
      : [...(config.kafkaBrokers ?? [])]
  )
    .map((b) => b.trim())
    .filter(Boolean);
  const redisUrl = config.redisUrl?.trim();
  const mongoUrl = config.mongoUrl?.trim();

  const bus =
    brokers.length > 0
      ? createKafkaEventBus({
          brokers,
          clientId: config.clientId,
          ...(config.logger ? { logger: config.logger } : {}),
          ...(config.kafkaConsumer ? { consumer: config.kafkaConsumer } : {}),
          ...(config.busObserver ? { observer: config.busObserver } : {}),
          ...(config.kafkaSecurity ? { security: config.kafkaSecurity } : {}),
          ...(config.kafkaTopicRetentionMs === undefined
            ? {}
            : { topicRetentionMs: config.kafkaTopicRetentionMs }),
          ...(config.valueSchemaIds ? { valueSchemaIds: config.valueSchemaIds } : {}),
        })
      : createInProcessEventBus(config.busObserver ? { observer: config.busObserver } : {});
  const store = mongoUrl
    ? createMongoDocumentStore({ url: mongoUrl, dbName: config.mongoDb || 'subx' })
    : createInMemoryDocumentStore();
  const kv = redisUrl
    ? createRedisKeyValueStore({ url: redisUrl })
    : createInMemoryKeyValueStore({ clock: config.clock ?? systemClock });

  const dependencies: Dependency[] = [];
  if (brokers.length > 0) {
    dependencies.push({
      name: 'kafka',
      target: brokers.join(','),
      variable: 'KAFKA_BROKERS',
      check: async () => {
        // isHealthy is bounded (healthTimeoutMs) and says only yes or no.
        if (!(await bus.isHealthy())) throw new Error('no broker answered describeCluster in time');
      },
    });
  }
  if (mongoUrl) {
    dependencies.push({
      name: 'mongo',
      target: hostsOf(mongoUrl),
      variable: 'MONGO_URL',
      check: () => store.ping(),
    });
  }
  if (redisUrl) {
    dependencies.push({
      name: 'redis',
      target: hostsOf(redisUrl),
      variable: 'REDIS_URL',
      check: () => kv.ping(),
    });
  }

  return {
    bus,
    store,
    kv,
    dependencies,
    kind: {
      bus: brokers.length > 0 ? 'kafka' : 'in-process',
      store: mongoUrl ? 'mongo' : 'in-memory',
      kv: redisUrl ? 'redis' : 'in-memory',
    },
    async close() {
      await bus.close().catch(() => undefined);
      await Promise.allSettled([store.close(), kv.close()]);
    },
  };
}
