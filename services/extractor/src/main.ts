/** Composition root of the extractor service running alone (compose, Kubernetes). */
import { createAdapters } from '@subx/ports';
import { busMetrics, runService } from '@subx/service-kit';
import { loadYouTubeConfig } from '@subx/youtube';
import { ConfigSchema } from './config.ts';
import { startExtractorService } from './index.ts';

await runService({
  service: 'extractor',
  schema: ConfigSchema,
  start: async (config, logger) => {
    const adapters = createAdapters({
      redisUrl: config.REDIS_URL,
      kafkaBrokers: config.KAFKA_BROKERS,
      clientId: config.KAFKA_CLIENT_ID,
      logger,
      busObserver: busMetrics(),
    });
    const service = await startExtractorService({
      config,
      youtube: loadYouTubeConfig(process.env),
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
