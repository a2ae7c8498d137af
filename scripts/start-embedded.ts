/**
 * `npm start`: the whole system in one process on embedded adapters (in-process event bus,
 * in-memory document and key-value stores), each gRPC service on its own loopback port so the gRPC
 * boundaries are real, the gateway on PORT (default 8080). KAFKA_BROKERS, MONGO_URL and REDIS_URL,
 * when set, replace the embedded adapters with the real engines.
 *
 * Prints the URL, the admin token (generated unless ADMIN_TOKEN is set), a ready-to-use pro key and
 * the dashboard's URL (DASHBOARD_PORT, default 8090). Without SMTP_URL the dashboard's mails
 * (verification and reset links) are printed here.
 */
import { createAdapters } from '@subx/ports';
import { createLifecycle, createLogger } from '@subx/service-kit';
import { loadYouTubeConfig } from '@subx/youtube';
import { loadAiConfig, startAiService } from '@subx/ai';
import { loadBillingConfig, startBillingService } from '@subx/billing';
import { loadCommentsConfig, startCommentsService } from '@subx/comments';
import { loadExtractorConfig, startExtractorService } from '@subx/extractor';
import { loadConfig as loadGatewayConfig, startGateway } from '@subx/gateway';
import { loadDashboardConfig, startDashboard } from '@subx/dashboard';

const env = process.env;
const LOOPBACK = '127.0.0.1';
const logLevel = env.LOG_LEVEL || 'warn';
const logger = createLogger({ service: 'subx', level: logLevel });
const serviceLogger = (service: string) => logger.child({ service });
// Inside one process each gRPC service picks a free loopback port; their env GRPC_PORT is ignored.
const serviceEnv = { ...env, GRPC_PORT: '0', LOG_LEVEL: logLevel };

const adapters = createAdapters({
  redisUrl: env.REDIS_URL,
  kafkaBrokers: env.KAFKA_BROKERS,
  mongoUrl: env.MONGO_URL,
  mongoDb: env.MONGO_DB,
  clientId: 'subx-embedded',
  logger,
});
const lifecycle = createLifecycle({ logger, shutdownTimeoutMs: 15_000 });
lifecycle.register('adapters', { stop: () => adapters.close() });

const youtube = loadYouTubeConfig(env);
const billing = await startBillingService({
  config: loadBillingConfig(serviceEnv),
  store: adapters.store,
  bus: adapters.bus,
  logger: serviceLogger('billing'),
  host: LOOPBACK,
});
lifecycle.register('billing', { stop: () => billing.stop() });

const extractor = await startExtractorService({
  config: loadExtractorConfig(serviceEnv),
  youtube,
  kv: adapters.kv,
  bus: adapters.bus,
  logger: serviceLogger('extractor'),
  host: LOOPBACK,
});
lifecycle.register('extractor', { stop: () => extractor.stop() });

const comments = await startCommentsService({
  config: loadCommentsConfig(serviceEnv),
  youtube,
  kv: adapters.kv,
  logger: serviceLogger('comments'),
  host: LOOPBACK,
});
lifecycle.register('comments', { stop: () => comments.stop() });

const ai = await startAiService({
  config: loadAiConfig({
    ...serviceEnv,
    EXTRACTOR_GRPC_ADDR: `${LOOPBACK}:${extractor.port}`,
    COMMENTS_GRPC_ADDR: `${LOOPBACK}:${comments.port}`,
  }),
  kv: adapters.kv,
  logger: serviceLogger('ai'),
  host: LOOPBACK,
});
lifecycle.register('ai', { stop: () => ai.stop() });

const gatewayConfig = loadGatewayConfig({
  ...env,
  HOST: env.HOST || LOOPBACK,
  LOG_LEVEL: logLevel,
  EXTRACTOR_GRPC_ADDR: `${LOOPBACK}:${extractor.port}`,
  COMMENTS_GRPC_ADDR: `${LOOPBACK}:${comments.port}`,
  AI_GRPC_ADDR: `${LOOPBACK}:${ai.port}`,
  BILLING_GRPC_ADDR: `${LOOPBACK}:${billing.port}`,
});
const gateway = await startGateway({
  config: gatewayConfig,
  env,
  embedded: true,
  store: adapters.store,
  kv: adapters.kv,
  bus: adapters.bus,
  logger: serviceLogger('gateway'),
});
lifecycle.register('gateway', { stop: () => gateway.stop() });

const dashboardConfig = loadDashboardConfig({
  ...env,
  // PORT=0 (tests) means free ports everywhere: the dashboard too, unless DASHBOARD_PORT says otherwise.
  DASHBOARD_PORT: env.DASHBOARD_PORT || (env.PORT === '0' ? '0' : undefined),
  HOST: env.HOST || LOOPBACK,
  LOG_LEVEL: logLevel,
  GATEWAY_URL: gateway.url,
  ADMIN_TOKEN: gateway.adminToken,
});
const dashboard = await startDashboard({
  config: dashboardConfig,
  kv: adapters.kv,
  store: adapters.store,
  logger: serviceLogger('dashboard'),
  onConsoleMail: (mail) =>
    process.stdout.write(`\n--- mail to ${mail.to}: ${mail.subject}\n${mail.text}\n---\n`),
});
// Stops before the gateway (registered later, stopped earlier): no page calls a closed gateway.
lifecycle.register('dashboard', { stop: () => dashboard.stop() });
lifecycle.installSignalHandlers();
await lifecycle.start();

const { apiKey, account } = await gateway.access.accounts.createAccount({ tier: 'pro' });
const engines = adapters.kind;
const lines = [
  '',
  `subx is running at ${gateway.url}`,
  `  health:       ${gateway.url}/health`,
  `  API docs:     ${gateway.url}/docs`,
  `  dashboard:    ${dashboard.url}  (sign up, API keys, usage, playground; mails are printed here)`,
  `  admin token:  ${gateway.generated.adminToken ? `${gateway.adminToken}  (generated; set ADMIN_TOKEN to choose one)` : '(from ADMIN_TOKEN)'}`,
  `  pro API key:  ${apiKey}  (account ${account._id})`,
  `  engines:      bus=${engines.bus} store=${engines.store} kv=${engines.kv}`,
  `  gRPC:         extractor :${extractor.port}  comments :${comments.port}  ai :${ai.port}  billing :${billing.port}`,
  `  YouTube:      ${youtube.baseUrl}`,
  '',
  `Try: curl -s -X POST ${gateway.url}/api/v1/extract -H 'X-API-Key: ${apiKey}' -H 'content-type: application/json' -d '{"url":"https://youtu.be/dQw4w9WgXcQ"}'`,
  'Ctrl-C stops everything gracefully.',
  '',
];
process.stdout.write(lines.join('\n'));
