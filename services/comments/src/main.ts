/** Composition root of the comments service running alone (compose, Kubernetes). */
import { createAdapters } from '@subx/ports';
import { runService } from '@subx/service-kit';
import { loadYouTubeConfig } from '@subx/youtube';
import { ConfigSchema } from './config.ts';
import { startCommentsService } from './index.ts';

await runService({
  service: 'comments',
  schema: ConfigSchema,
  start: async (config, logger) => {
    const adapters = createAdapters({ redisUrl: config.REDIS_URL, clientId: 'comments', logger });
    const service = await startCommentsService({
      config,
      youtube: loadYouTubeConfig(process.env),
      kv: adapters.kv,
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
