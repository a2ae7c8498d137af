/** Composition root of the dashboard running alone (compose, Kubernetes). */
import { createAdapters } from '@subx/ports';
import { runService, waitForEngines } from '@subx/service-kit';
import { ConfigSchema } from './config.ts';
import { startDashboard } from './index.ts';

await runService({
  service: 'dashboard',
  schema: ConfigSchema,
  start: async (config, logger) => {
    const adapters = createAdapters({
      redisUrl: config.REDIS_URL,
      mongoUrl: config.MONGO_URL,
      mongoDb: config.MONGO_DB,
      clientId: 'dashboard',
      logger,
    });
    // Its configured engines answer first: started beside them, it waits rather than exit.
    await waitForEngines(adapters, config, logger);
    const dashboard = await startDashboard({
      config,
      kv: adapters.kv,
      store: adapters.store,
      logger,
      mailsShownIn: "the dashboard's log",
      onConsoleMail: (mail) =>
        logger.info({ to: mail.to, subject: mail.subject, text: mail.text }, 'mail (no SMTP_URL)'),
    });
    logger.info({ url: dashboard.url }, 'dashboard listening');
    return {
      stop: async () => {
        await dashboard.stop();
        await adapters.close();
      },
    };
  },
});
