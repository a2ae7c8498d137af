export * from './event-bus/port.ts';
export * from './document-store/port.ts';
export * from './key-value/port.ts';
export * from './clock.ts';
export * from './logger.ts';
export { backoffDelay, type Backoff } from './backoff.ts';
export {
  createInProcessEventBus,
  type InProcessEventBus,
  type InProcessEventBusOptions,
} from './event-bus/in-process.ts';
export {
  createKafkaEventBus,
  type KafkaConsumerTuning,
  type KafkaEventBus,
  type KafkaEventBusOptions,
} from './event-bus/kafka.ts';
export {
  kafkaSecurityConfig,
  type KafkaSaslMechanism,
  type KafkaSecurity,
} from './event-bus/kafka-security.ts';
export {
  registerTopicSchemas,
  VALUE_SCHEMA_ID_HEADER,
  type SchemaRegistryOptions,
  type TopicSchemaOf,
  type ValueSchemaIds,
} from './event-bus/schema-registry.ts';
export type { RetryBackoff } from './event-bus/shared.ts';
export { MAX_UNCOMMITTED_SPAN } from './event-bus/shared.ts';
export { createInMemoryDocumentStore } from './document-store/in-memory.ts';
export {
  createMongoDocumentStore,
  type MongoDocumentStore,
  type MongoDocumentStoreOptions,
} from './document-store/mongo.ts';
export {
  createInMemoryKeyValueStore,
  type InMemoryKeyValueStore,
  type InMemoryKeyValueStoreOptions,
} from './key-value/in-memory.ts';
export { createRedisKeyValueStore, type RedisKeyValueStoreOptions } from './key-value/redis.ts';
export { createJsonCache, type JsonCache, type LoadOptions } from './cache.ts';
export { createAdapters, type Adapters, type AdaptersConfig, type Dependency } from './adapters.ts';
