/** Composition root of the extractor service running alone (compose, Kubernetes). */
import { eventMessageType, eventDescriptors } from '@subx/contracts';
import { createAdapters, registerTopicSchemas } from '@subx/ports';
import {
  busMetrics,
  kafkaSecurityFromConfig,
  registerSchemasAtStartup,
  runService,
  schemaRegistryFromConfig,
  waitForEngines,
} from '@subx/service-kit';
import { loadYouTubeConfig } from '@subx/youtube';
import { ConfigSchema } from './config.ts';
import { startExtractorService } from './index.ts';

await runService({
  service: 'extractor',
  schema: ConfigSchema,
  // YOUTUBE_* problems are listed together with this service's own.
  extraConfig: (env) => loadYouTubeConfig(env),
  start: async (config, logger, youtube) => {
    const registry = schemaRegistryFromConfig(config);
    /** Topic → schema id header, filled below once the registry has our schemas. */
    const valueSchemaIds = new Map<string, Buffer>();
    const adapters = createAdapters({
      redisUrl: config.REDIS_URL,
      kafkaBrokers: config.KAFKA_BROKERS,
      kafkaSecurity: kafkaSecurityFromConfig(config),
      kafkaTopicRetentionMs: config.KAFKA_TOPIC_RETENTION_MS,
      clientId: config.KAFKA_CLIENT_ID,
      logger,
      busObserver: busMetrics(),
      valueSchemaIds,
    });
    // Its configured engines answer first: started beside them, it waits rather than exit.
    await waitForEngines(adapters, config, logger);
    // Results go to EXTRACT_RESULTS_TOPIC or to a reply topic a job names from EXTRACT_REPLY_TOPICS.
    const resultTopics = new Set([config.EXTRACT_RESULTS_TOPIC, ...(config.EXTRACT_REPLY_TOPICS ?? [])]);
    const messageType = eventMessageType('extractResults');
    await registerSchemasAtStartup({
      registry,
      bus: adapters.kind.bus,
      logger,
      valueSchemaIds,
      register: (options) =>
        registerTopicSchemas(
          options,
          eventDescriptors(),
          [...resultTopics].map((topic) => ({ topic, messageType })),
        ),
    });
    const service = await startExtractorService({
      config,
      youtube,
      kv: adapters.kv,
      ...(adapters.kind.bus === 'kafka' ? { bus: adapters.bus } : {}),
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
