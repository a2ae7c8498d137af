import { systemClock, type Clock } from './clock.ts';
import { createInMemoryDocumentStore } from './document-store/in-memory.ts';
import { createMongoDocumentStore } from './document-store/mongo.ts';
import type { DocumentStore } from './document-store/port.ts';
import { createInProcessEventBus } from './event-bus/in-process.ts';
import { createKafkaEventBus, type BusLogger, type KafkaConsumerTuning } from './event-bus/kafka.ts';
import type { KafkaSecurity } from './event-bus/kafka-security.ts';
import type { BusObserver, EventBus } from './event-bus/port.ts';
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
  logger?: BusLogger;
  kafkaConsumer?: KafkaConsumerTuning;
  /** Metrics of the bus (service-kit's `busMetrics()`). */
  busObserver?: BusObserver;
  /** TLS and SASL to Kafka (service-kit's `kafkaSecurityFromConfig`). */
  kafkaSecurity?: KafkaSecurity;
}

export interface Adapters {
  bus: EventBus;
  store: DocumentStore;
  kv: KeyValueStore;
  kind: { bus: 'kafka' | 'in-process'; store: 'mongo' | 'in-memory'; kv: 'redis' | 'in-memory' };
  /** Closes all three; the bus first, so in-flight handlers can still write. */
  close(): Promise<void>;
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
        })
      : createInProcessEventBus(config.busObserver ? { observer: config.busObserver } : {});
  const store = mongoUrl
    ? createMongoDocumentStore({ url: mongoUrl, dbName: config.mongoDb || 'subx' })
    : createInMemoryDocumentStore();
  const kv = redisUrl
    ? createRedisKeyValueStore({ url: redisUrl })
    : createInMemoryKeyValueStore({ clock: config.clock ?? systemClock });

  return {
    bus,
    store,
    kv,
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
