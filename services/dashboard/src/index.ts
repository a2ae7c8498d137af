/**
 * The self-service dashboard: sign up, confirm the email, get and rotate an API key, see usage,
 * try the API, and (operators) manage accounts. A backend-for-frontend of the gateway's admin API.
 */
import type { DocumentStore, KeyValueStore } from '@subx/ports';
import { portInUse } from '@subx/service-kit';
import type { PinoLogger } from '@subx/service-kit';
import type { FastifyInstance } from 'fastify';
import { buildDashboardApp } from './app.ts';
import type { DashboardConfig } from './config.ts';
import { createGatewayClient } from './gateway/client.ts';
import type { SampleVideo } from './views/first-request.ts';
import type { GatewayClient } from './gateway/client.ts';
import type { Mail } from './mail/mailer.ts';
import { createMailer } from './mail/mailer.ts';

export { ConfigSchema, loadDashboardConfig } from './config.ts';
export type { DashboardConfig } from './config.ts';
export { buildDashboardApp, CONTENT_SECURITY_POLICY } from './app.ts';
export { SECURE_SESSION_COOKIE, SESSION_COOKIE } from './auth/cookies.ts';
export type { Mail } from './mail/mailer.ts';
export type { SampleVideo } from './views/first-request.ts';

export interface RunningDashboard {
  url: string;
  port: number;
  app: FastifyInstance;
  stop(): Promise<void>;
}

export async function startDashboard(options: {
  config: DashboardConfig;
  kv: KeyValueStore;
  store: DocumentStore;
  logger: PinoLogger;
  /** Without SMTP_URL each mail goes here (the launcher prints it). */
  onConsoleMail?: (mail: Mail) => void;
  gateway?: GatewayClient;
  /** `npm run demo`: the videos the replay has (playground, first request). */
  demoVideos?: readonly SampleVideo[];
  /** Without SMTP_URL: where the mails are shown ("the console where `npm start` runs"). */
  mailsShownIn?: string;
}): Promise<RunningDashboard> {
  const { config, logger } = options;
  const mailer = createMailer({
    smtpUrl: config.SMTP_URL,
    from: config.MAIL_FROM,
    timeoutMs: config.GATEWAY_TIMEOUT_MS,
    ...(options.onConsoleMail ? { onConsoleMail: options.onConsoleMail } : {}),
  });
  const gateway =
    options.gateway ??
    createGatewayClient({
      baseUrl: config.GATEWAY_ADMIN_URL,
      adminToken: config.ADMIN_TOKEN,
      timeoutMs: config.GATEWAY_TIMEOUT_MS,
    });
  const app = await buildDashboardApp({
    config,
    kv: options.kv,
    store: options.store,
    gateway,
    mailer,
    logger,
    ...(options.demoVideos ? { demoVideos: options.demoVideos } : {}),
    ...(options.mailsShownIn ? { mailsShownIn: options.mailsShownIn } : {}),
  });
  await app.listen({ port: config.DASHBOARD_PORT, host: config.HOST }).catch(async (err: unknown) => {
    await app.close().catch(() => {});
    throw portInUse(err, 'DASHBOARD_PORT', config.DASHBOARD_PORT);
  });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.DASHBOARD_PORT;
  const host = config.HOST === '0.0.0.0' || config.HOST === '::' ? '127.0.0.1' : config.HOST;
  return {
    url: `http://${host}:${port}`,
    port,
    app,
    async stop() {
      await app.close();
      mailer.close();
    },
  };
}
