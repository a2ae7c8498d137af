/** Composition root of the extractor service running alone (compose, Kubernetes). */
import { createAdapters } from '@subx/ports';
import { busMetrics, kafkaSecurityFromConfig, runService, waitForEngines } from '@subx/service-kit';
import { loadYouTubeConfig } from '@subx/youtube';
import { ConfigSchema } from './config.ts';
import { startExtractorService } from './index.ts';

await runService({
  service: 'extractor',
  schema: ConfigSchema,
  // YOUTUBE_* problems are listed together with this service's own.
  extraConfig: (env) => loadYouTubeConfig(env),
  start: async (config, logger, youtube) => {
    const adapters = createAdapters({
      redisUrl: config.REDIS_URL,
      kafkaBrokers: config.KAFKA_BROKERS,
      kafkaSecurity: kafkaSecurityFromConfig(config),
      clientId: config.KAFKA_CLIENT_ID,
      logger,
      busObserver: busMetrics(),
    });
    // Its configured engines answer first: started beside them, it waits rather than exit.
    await waitForEngines(adapters, config, logger);
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
