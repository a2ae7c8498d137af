/**
 * `npm start`: the whole system in one process on embedded adapters (in-process event bus,
 * in-memory document and key-value stores), each gRPC service on its own loopback port so the gRPC
 * boundaries are real, the gateway on PORT (default 8080). KAFKA_BROKERS, MONGO_URL and REDIS_URL,
 * when set, replace the embedded adapters with the real engines.
 *
 * One process has one metrics registry: `/metrics` on METRICS_PORT (default 9464, `off` to disable)
 * serves the series of every service together.
 *
 * Prints the URL, the admin API's URL (its own listener, ADMIN_PORT), the admin token (generated unless ADMIN_TOKEN is set), a ready-to-use pro key and
 * the dashboard's URL (DASHBOARD_PORT, default 8090). Without SMTP_URL the dashboard's mails
 * (verification and reset links) are printed here.
 *
 * `--demo` (`npm run demo`): the platform is a local replay of recorded videos instead of YouTube,
 * and the pro key is the fixed demo key (demo.ts).
 *
 * Run by `npm start` through `scripts/start-embedded.ts` (the path the scripts and tests call), or
 * directly; `launcher.ts` spawns it for black-box tests.
 */
import { eventDescriptors, eventMessageType, topicSchemas } from '@subx/contracts';
import { createAdapters, registerTopicSchemas } from '@subx/ports';
import {
  assertPortsFree,
  busMetrics,
  createLifecycle,
  createLogger,
  kafkaSecurityFromConfig,
  loadAllConfig,
  metricsPort,
  registerSchemasAtStartup,
  schemaRegistryFromConfig,
  startMetricsServer,
  startupProblem,
  waitForEngines,
} from '@subx/service-kit';
import { loadYouTubeConfig } from '@subx/youtube';
import { loadAiConfig, startAiService } from '@subx/ai';
import { loadBillingConfig, startBillingService } from '@subx/billing';
import { loadCommentsConfig, startCommentsService } from '@subx/comments';
import { loadExtractorConfig, startExtractorService } from '@subx/extractor';
import { loadAccessConfig, loadConfig as loadGatewayConfig, startGateway } from '@subx/gateway';
import { loadJobServiceConfig, startJobService } from '@subx/jobs';
import { loadDashboardConfig, startDashboard } from '@subx/dashboard';

const env = process.env;
const LOOPBACK = '127.0.0.1';
const logLevel = env.LOG_LEVEL || 'warn';

/** A start-up problem a person can fix (bad configuration, busy port, an engine that never answers): one message, exit 1. */
function exitOnStartupProblem(err: unknown): never {
  const problem = startupProblem(err);
  if (problem === null) throw err;
  process.stderr.write(`subx: ${problem}\n`);
  process.exit(1);
}

// Before any configuration is read: the demo points YOUTUBE_BASE_URL at its replay. Imported only
// here, so that `npm start` never loads test support.
const demo = process.argv.includes('--demo')
  ? await (await import('./demo.ts')).startDemoPlatform(env)
  : null;

// Inside one process each gRPC service picks a free loopback port; their env GRPC_PORT is ignored.
// Copied after the demo has set what it sets (YOUTUBE_BASE_URL, its engines' URLs: speech,
// embeddings), so that every service reads it.
const serviceEnv = { ...env, GRPC_PORT: '0', LOG_LEVEL: logLevel };

// Every service's configuration first, so that every bad variable is listed at once.
let configs;
try {
  configs = loadAllConfig({
    youtube: () => loadYouTubeConfig(env),
    billing: () => loadBillingConfig(serviceEnv),
    extractor: () => loadExtractorConfig(serviceEnv),
    comments: () => loadCommentsConfig(serviceEnv),
    ai: () => loadAiConfig(serviceEnv),
    // The pepper the webhook secrets are sealed under: the one the access configuration generated.
    jobs: () => loadJobServiceConfig(serviceEnv, { embedded: true }),
    gateway: () =>
      loadGatewayConfig({
        ...env,
        HOST: env.HOST || LOOPBACK,
        // PORT=0 (tests): the admin listener on a free port too, unless ADMIN_PORT says otherwise.
        ADMIN_PORT: env.ADMIN_PORT || (env.PORT === '0' ? '0' : undefined),
        LOG_LEVEL: logLevel,
      }),
    access: () => loadAccessConfig(env, { embedded: true }),
    // KAFKA_SSL* / KAFKA_SASL_* of the one bus every service shares here (files read now).
    kafkaSecurity: () => kafkaSecurityFromConfig(loadGatewayConfig(env)),
    // SCHEMA_REGISTRY_* of that bus: every topic produced here is registered at start.
    schemaRegistry: () => schemaRegistryFromConfig(loadGatewayConfig(env)),
    // GATEWAY_URL, GATEWAY_ADMIN_URL and ADMIN_TOKEN come from the gateway once it runs; the rest is checked now
    dashboard: () =>
      loadDashboardConfig({
        ...env,
        // PORT=0 (tests) means free ports everywhere: the dashboard too, unless DASHBOARD_PORT says otherwise.
        DASHBOARD_PORT: env.DASHBOARD_PORT || (env.PORT === '0' ? '0' : undefined),
        HOST: env.HOST || LOOPBACK,
        LOG_LEVEL: logLevel,
        ADMIN_TOKEN: env.ADMIN_TOKEN || 'set-from-the-running-gateway',
        // npm start is not a deployment: without SMTP_URL it prints each mail (and its link) to
        // this console on purpose, even under NODE_ENV=production; MAIL_TO_LOG=false still refuses.
        MAIL_TO_LOG: env.MAIL_TO_LOG || 'true',
      }),
  });
} catch (err) {
  exitOnStartupProblem(err);
}

const metricsSetting = metricsPort.safeParse(env.METRICS_PORT || '9464');
if (!metricsSetting.success) throw new Error('METRICS_PORT must be a port number (0-65535) or "off"');
const metricsAt = metricsSetting.data;

// Every port this process listens on, checked before any service starts: all the busy ones in one
// line (the gRPC services and the demo's platform take free ports and cannot collide).
await assertPortsFree([
  { variable: 'PORT', port: configs.gateway.PORT, host: configs.gateway.HOST },
  { variable: 'ADMIN_PORT', port: configs.gateway.ADMIN_PORT, host: configs.gateway.ADMIN_HOST },
  { variable: 'DASHBOARD_PORT', port: configs.dashboard.DASHBOARD_PORT, host: configs.dashboard.HOST },
  ...(metricsAt === null ? [] : [{ variable: 'METRICS_PORT', port: metricsAt, host: LOOPBACK }]),
]).catch(exitOnStartupProblem);

const logger = createLogger({ service: 'subx', level: logLevel });
// One root logger per service (not a child of `logger`): a child's `service` would be a second
// `service` key on every line.
const serviceLogger = (service: string) => createLogger({ service, level: logLevel });

/** Topic → schema id header, filled once the registry (SCHEMA_REGISTRY_URL) has our schemas. */
const valueSchemaIds = new Map<string, Buffer>();
const adapters = createAdapters({
  valueSchemaIds,
  redisUrl: env.REDIS_URL,
  kafkaBrokers: env.KAFKA_BROKERS,
  ...(configs.kafkaSecurity ? { kafkaSecurity: configs.kafkaSecurity } : {}),
  // KAFKA_TOPIC_RETENTION_MS of the one bus, read (and checked) with the gateway's settings.
  kafkaTopicRetentionMs: configs.gateway.KAFKA_TOPIC_RETENTION_MS,
  mongoUrl: env.MONGO_URL,
  mongoDb: env.MONGO_DB,
  clientId: 'subx-embedded',
  logger,
  busObserver: busMetrics(),
});
// With REDIS_URL, KAFKA_BROKERS or MONGO_URL set, those engines answer first (the gateway's
// STARTUP_DEPENDENCY_TIMEOUT_MS); without them there is nothing to wait for.
await waitForEngines(adapters, configs.gateway, logger).catch(exitOnStartupProblem);
// Results go to EXTRACT_RESULTS_TOPIC or to a reply topic of EXTRACT_REPLY_TOPICS (the extractor's).
const replyTopics = (configs.extractor.EXTRACT_REPLY_TOPICS ?? []).map((topic) => ({
  topic,
  messageType: eventMessageType('extractResults'),
}));
await registerSchemasAtStartup({
  registry: configs.schemaRegistry,
  bus: adapters.kind.bus,
  logger,
  valueSchemaIds,
  register: (options) =>
    registerTopicSchemas(
      options,
      eventDescriptors(),
      topicSchemas({
        creditUsage: configs.access.config.creditUsageTopic,
        requestUsage: configs.access.config.requestUsageTopic,
        extractJobs: configs.gateway.EXTRACT_JOBS_TOPIC,
        extractBulkJobs: configs.jobs.EXTRACT_BULK_JOBS_TOPIC,
        extractResults: configs.extractor.EXTRACT_RESULTS_TOPIC,
        jobEvents: configs.jobs.JOB_EVENTS_TOPIC,
        watchEvents: configs.jobs.WATCH_EVENTS_TOPIC,
        auditEvents: configs.gateway.AUDIT_EVENTS_TOPIC,
        accountEvents: configs.gateway.ACCOUNT_EVENTS_TOPIC,
      }).concat(replyTopics),
    ),
}).catch(exitOnStartupProblem);
// One deadline for stopping every service of the process: SHUTDOWN_TIMEOUT_MS when set (checked
// above with the gateway's settings), else 15 s, a little more than one service's 10 s default.
const lifecycle = createLifecycle({
  logger,
  shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS?.trim() ? configs.gateway.SHUTDOWN_TIMEOUT_MS : 15_000,
});
lifecycle.register('adapters', { stop: () => adapters.close() });
const metrics =
  metricsAt === null
    ? null
    : await startMetricsServer({ port: metricsAt, host: LOOPBACK, logger }).catch(exitOnStartupProblem);
if (metrics) lifecycle.register('metrics', { stop: () => metrics.close() });

if (demo) lifecycle.register('demo platform', { stop: () => demo.close() });

const youtube = configs.youtube;
const billing = await startBillingService({
  config: configs.billing,
  store: adapters.store,
  bus: adapters.bus,
  logger: serviceLogger('billing'),
  host: LOOPBACK,
});
lifecycle.register('billing', { stop: () => billing.stop() });

const extractor = await startExtractorService({
  config: configs.extractor,
  youtube,
  kv: adapters.kv,
  bus: adapters.bus,
  logger: serviceLogger('extractor'),
  host: LOOPBACK,
});
lifecycle.register('extractor', { stop: () => extractor.stop() });

const comments = await startCommentsService({
  config: configs.comments,
  youtube,
  kv: adapters.kv,
  logger: serviceLogger('comments'),
  host: LOOPBACK,
});
lifecycle.register('comments', { stop: () => comments.stop() });

const ai = await startAiService({
  config: {
    ...configs.ai,
    EXTRACTOR_GRPC_ADDR: `${LOOPBACK}:${extractor.port}`,
    COMMENTS_GRPC_ADDR: `${LOOPBACK}:${comments.port}`,
  },
  kv: adapters.kv,
  logger: serviceLogger('ai'),
  host: LOOPBACK,
});
lifecycle.register('ai', { stop: () => ai.stop() });

const jobs = await startJobService({
  config: { ...configs.jobs, EXTRACTOR_GRPC_ADDR: `${LOOPBACK}:${extractor.port}` },
  store: adapters.store,
  kv: adapters.kv,
  bus: adapters.bus,
  logger: serviceLogger('jobs'),
  host: LOOPBACK,
  pepper: configs.access.config.apiKeyPepper,
}).catch(exitOnStartupProblem);
lifecycle.register('jobs', { stop: () => jobs.stop() });

const gatewayConfig = {
  ...configs.gateway,
  JOBS_GRPC_ADDR: `${LOOPBACK}:${jobs.port}`,
  EXTRACTOR_GRPC_ADDR: `${LOOPBACK}:${extractor.port}`,
  COMMENTS_GRPC_ADDR: `${LOOPBACK}:${comments.port}`,
  AI_GRPC_ADDR: `${LOOPBACK}:${ai.port}`,
  BILLING_GRPC_ADDR: `${LOOPBACK}:${billing.port}`,
};
const gateway = await startGateway({
  config: gatewayConfig,
  env,
  embedded: true,
  store: adapters.store,
  kv: adapters.kv,
  bus: adapters.bus,
  logger: serviceLogger('gateway'),
}).catch(exitOnStartupProblem);
lifecycle.register('gateway', { stop: () => gateway.stop() });

const dashboard = await startDashboard({
  config: {
    ...configs.dashboard,
    GATEWAY_URL: gateway.url,
    GATEWAY_ADMIN_URL: gateway.admin.url,
    ADMIN_TOKEN: gateway.adminToken,
  },
  kv: adapters.kv,
  store: adapters.store,
  logger: serviceLogger('dashboard'),
  // The demo's replay knows only its recorded videos: the playground and the first request use them.
  ...(demo ? { demoVideos: demo.videos } : {}),
  mailsShownIn: `the console where \`npm ${demo ? 'run demo' : 'start'}\` runs`,
  onConsoleMail: (mail) =>
    process.stdout.write(`\n--- mail to ${mail.to}: ${mail.subject}\n${mail.text}\n---\n`),
}).catch(exitOnStartupProblem);
// Stops before the gateway (registered later, stopped earlier): no page calls a closed gateway.
lifecycle.register('dashboard', { stop: () => dashboard.stop() });
lifecycle.installSignalHandlers();
await lifecycle.start();

const { apiKey, account } = demo
  ? await demo.seedAccount(gateway.access.accounts)
  : await gateway.access.accounts.createAccount({ tier: 'pro' });
const engines = adapters.kind;
const platformNote = demo
  ? 'local replay of recorded videos, no network'
  : env.YOUTUBE_BASE_URL
    ? 'from YOUTUBE_BASE_URL'
    : 'the real platform; `npm run demo` replays recorded videos offline';
const lines = [
  '',
  `subx is running at ${gateway.url}`,
  `  health:       ${gateway.url}/health`,
  `  API docs:     ${gateway.url}/docs`,
  `  MCP:          ${gateway.url}/mcp  (tools for AI agents, same key; ${gateway.url}/llms.txt)`,
  `  dashboard:    ${dashboard.url}  (sign up, API keys, usage, playground; mails are printed here)`,
  // One space after the colon: outside checks read this line as `admin API: <url>`.
  `  admin API: ${gateway.admin.url}  (ADMIN_HOST:ADMIN_PORT, loopback by default; never on the public port)`,
  `  admin token:  ${gateway.generated.adminToken ? `${gateway.adminToken}  (generated; set ADMIN_TOKEN to choose one)` : '(from ADMIN_TOKEN)'}`,
  `  pro API key:  ${apiKey}  (account ${account._id})`,
  `  engines:      bus=${engines.bus} store=${engines.store} kv=${engines.kv}`,
  `  gRPC:         extractor :${extractor.port}  comments :${comments.port}  ai :${ai.port}  billing :${billing.port}  jobs :${jobs.port}`,
  `  metrics:      ${metrics ? `${metrics.url}  (every service; METRICS_PORT, off to disable)` : 'off (METRICS_PORT=off)'}`,
  `  YouTube:      ${youtube.baseUrl}  (${platformNote})`,
  '',
  ...(demo ? [...demo.banner(gateway.url), ''] : []),
  `Try: curl -s -X POST ${gateway.url}/api/v1/extract -H 'X-API-Key: ${apiKey}' -H 'content-type: application/json' -d '{"url":"https://youtu.be/${demo?.tryVideoId ?? 'dQw4w9WgXcQ'}"}'`,
  'Ctrl-C stops everything gracefully.',
  '',
];
process.stdout.write(lines.join('\n'));
