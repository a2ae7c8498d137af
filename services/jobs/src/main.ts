/** Composition root of the job service running alone (compose, Kubernetes). */
import { eventDescriptors, topicSchemas } from '@subx/contracts';
import { createAdapters, registerTopicSchemas } from '@subx/ports';
import {
  busMetrics,
  kafkaSecurityFromConfig,
  registerSchemasAtStartup,
  runService,
  schemaRegistryFromConfig,
  waitForEngines,
} from '@subx/service-kit';
import { ConfigSchema } from './config.ts';
import { startJobService } from './index.ts';

await runService({
  service: 'jobs',
  schema: ConfigSchema,
  start: async (config, logger) => {
    const registry = schemaRegistryFromConfig(config);
    /** Topic → schema id header, filled below once the registry has our schemas. */
    const valueSchemaIds = new Map<string, Buffer>();
    const adapters = createAdapters({
      redisUrl: config.REDIS_URL,
      kafkaBrokers: config.KAFKA_BROKERS,
      kafkaSecurity: kafkaSecurityFromConfig(config),
      kafkaTopicRetentionMs: config.KAFKA_TOPIC_RETENTION_MS,
      mongoUrl: config.MONGO_URL,
      mongoDb: config.MONGO_DB,
      clientId: config.KAFKA_CLIENT_ID,
      logger,
      busObserver: busMetrics(),
      valueSchemaIds,
    });
    // Its configured engines answer first: started beside them, it waits rather than exit.
    await waitForEngines(adapters, config, logger);
    await registerSchemasAtStartup({
      registry,
      bus: adapters.kind.bus,
      logger,
      valueSchemaIds,
      register: (options) =>
        registerTopicSchemas(
          options,
          eventDescriptors(),
          topicSchemas({
            creditUsage: config.CREDIT_USAGE_TOPIC,
            requestUsage: config.REQUEST_USAGE_TOPIC,
            extractBulkJobs: config.EXTRACT_BULK_JOBS_TOPIC,
            jobEvents: config.JOB_EVENTS_TOPIC,
            watchEvents: config.WATCH_EVENTS_TOPIC,
          }),
        ),
    });
    const service = await startJobService({
      config,
      store: adapters.store,
      kv: adapters.kv,
      bus: adapters.bus,
      // Bulk items need workers on a shared broker; without Kafka it calls the extractor itself.
      fanOut: adapters.kind.bus === 'kafka' ? 'bus' : 'direct',
      logger,
    });
    return {
      stop: async () => {
        await service.stop();
        await adapters.close();
      },
    };
  },
});
