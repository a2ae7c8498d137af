/** Composition root of the AI service running alone (compose, Kubernetes). */
import { createAdapters } from '@subx/ports';
import { runService, waitForEngines } from '@subx/service-kit';
import { ConfigSchema } from './config.ts';
import { startAiService } from './index.ts';

await runService({
  service: 'ai',
  schema: ConfigSchema,
  start: async (config, logger) => {
    const adapters = createAdapters({ redisUrl: config.REDIS_URL, clientId: 'ai', logger });
    // Its configured engines answer first: started beside them, it waits rather than exit.
    await waitForEngines(adapters, config, logger);
    const service = await startAiService({ config, kv: adapters.kv, logger });
    return {
      stop: async () => {
        await service.stop();
        await adapters.close();
      },
    };
  },
});
