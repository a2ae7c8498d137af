/** Composition root of the billing service running alone (compose, Kubernetes). */
import { createAdapters } from '@subx/ports';
import { busMetrics, kafkaSecurityFromConfig, runService, waitForEngines } from '@subx/service-kit';
import { ConfigSchema } from './config.ts';
import { startBillingService } from './index.ts';

await runService({
  service: 'billing',
  schema: ConfigSchema,
  start: async (config, logger) => {
    const adapters = createAdapters({
      kafkaBrokers: config.KAFKA_BROKERS,
      kafkaSecurity: kafkaSecurityFromConfig(config),
      kafkaTopicRetentionMs: config.KAFKA_TOPIC_RETENTION_MS,
      mongoUrl: config.MONGO_URL,
      mongoDb: config.MONGO_DB,
      clientId: config.KAFKA_CLIENT_ID,
      logger,
      busObserver: busMetrics(),
    });
    // Its configured engines answer first: started beside them, it waits rather than exit.
    await waitForEngines(adapters, config, logger);
    const service = await startBillingService({ config, store: adapters.store, bus: adapters.bus, logger });
    return {
      stop: async () => {
        await service.stop();
        await adapters.close();
      },
    };
  },
});
