/** Composition root of the gateway running alone (compose, Kubernetes). */
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
import { loadAccessConfig } from './access/config.ts';
import { startGateway } from './start-gateway.ts';

await runService({
  service: 'gateway',
  schema: ConfigSchema,
  // Access variables (API_KEY_PEPPER, ADMIN_TOKEN, ...) are checked up front, listed with the rest.
  extraConfig: (env) => loadAccessConfig(env, { embedded: false }),
  start: async (config, logger, access) => {
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
            creditUsage: access.config.creditUsageTopic,
            requestUsage: access.config.requestUsageTopic,
            extractJobs: config.EXTRACT_JOBS_TOPIC,
            auditEvents: config.AUDIT_EVENTS_TOPIC,
            accountEvents: config.ACCOUNT_EVENTS_TOPIC,
          }),
        ),
    });
    const gateway = await startGateway({
      config,
      env: process.env,
      embedded: false,
      store: adapters.store,
      kv: adapters.kv,
      bus: adapters.bus,
      // Batch items go to workers on a shared broker; without Kafka this gateway calls the extractor itself.
      fanOut: adapters.kind.bus === 'kafka' ? 'bus' : 'direct',
      logger,
    });
    return {
      stop: async () => {
        await gateway.stop();
        await adapters.close();
      },
    };
  },
});
