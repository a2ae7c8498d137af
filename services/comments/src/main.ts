/** Composition root of the comments service running alone (compose, Kubernetes). */
import { createAdapters } from '@subx/ports';
import { runService, waitForEngines } from '@subx/service-kit';
import { loadYouTubeConfig } from '@subx/youtube';
import { ConfigSchema } from './config.ts';
import { startCommentsService } from './index.ts';

await runService({
  service: 'comments',
  schema: ConfigSchema,
  // YOUTUBE_* problems are listed together with this service's own.
  extraConfig: (env) => loadYouTubeConfig(env),
  start: async (config, logger, youtube) => {
    const adapters = createAdapters({ redisUrl: config.REDIS_URL, clientId: 'comments', logger });
    // Its configured engines answer first: started beside them, it waits rather than exit.
    await waitForEngines(adapters, config, logger);
    const service = await startCommentsService({
      config,
      youtube,
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
