/**
 * Composition of a running gateway: access module (keys, limits, credits, outbox relay), gRPC
 * backends, fan-out, the fastify app, and listen. Shared by main.ts (one service alone) and the
 * one-process launcher (`npm start`), so both run exactly the same wiring.
 */
import { createEmbedder, loadEmbeddingsConfig } from '@subx/embeddings';
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import type { Clock, DocumentStore, EventBus, KeyValueStore } from '@subx/ports';
import { systemClock } from '@subx/ports';
import { portInUse, withTimeout } from '@subx/service-kit';
import type { PinoLogger } from '@subx/service-kit';
import { createJobServiceClient, grpcBackendsFromConfig } from '@subx/backends';
import { createDirectFanOut, createKafkaFanOut } from '@subx/fanout';
import { refuseReservationsShorterThan } from '@subx/credits';
import { grpcTlsFromConfig } from '@subx/service-kit';
import {
  createAccessModule,
  createBillingUsageReader,
  guardKeyValueStore,
  loadAccessConfig,
} from './access/index.ts';
import type { AccessModule } from './access/index.ts';
import { buildAdminApp, listenAdmin } from './admin/listener.ts';
import { createAuditLog } from './audit/audit-log.ts';
import { createWorkspaceDeletion } from './deletion/delete-workspace.ts';
import type { AuditLogModule } from './audit/audit-log.ts';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import type { FanOut } from '@subx/fanout';

export interface StartGatewayOptions {
  config: Config;
  /** Access-control variables (API_KEY_PEPPER, ADMIN_TOKEN, ACCESS_PRICING_JSON, ...). */
  env: Record<string, string | undefined>;
  /** Embedded mode generates a missing pepper and admin token instead of refusing to start. */
  embedded: boolean;
  store: DocumentStore;
  kv: KeyValueStore;
  bus: EventBus;
  logger: PinoLogger;
  clock?: Clock;
  /**
   * How batch and playlist reach the extractor: 'bus' publishes one job per video on the event bus
   * (Kafka, or the in-process bus inside `npm start`) for the extractor workers; 'direct' calls the
   * extractor over gRPC (a gateway without a bus to share with workers). Default 'bus'.
   */
  fanOut?: 'bus' | 'direct';
  /** Unique per gateway process; results of bus fan-out come back addressed to it. */
  instanceId?: string;
}

export interface RunningGateway {
  url: string;
  port: number;
  app: FastifyInstance;
  /** The admin API's listener (ADMIN_HOST:ADMIN_PORT), never the public port. */
  admin: { url: string; port: number; app: FastifyInstance };
  access: AccessModule;
  /** The accounts' audit log (src/audit): what the routes record, its outbox relay and sweep. */
  audit: AuditLogModule;
  /** Secrets generated because the environment had none (embedded mode prints the admin token). */
  generated: { apiKeyPepper: boolean; adminToken: boolean };
  adminToken: string;
  /** Not ready from here on; stops intake, lets in-flight requests finish, then releases everything. */
  stop(): Promise<void>;
}

export async function startGateway(options: StartGatewayOptions): Promise<RunningGateway> {
  const { config, logger, store, bus } = options;
  // Redis unavailability answers 503 SERVICE_UNAVAILABLE (retryable), never a 500 or a hang.
  const kv = guardKeyValueStore(options.kv);
  const clock = options.clock ?? systemClock;
  const { config: accessConfig, generated } = loadAccessConfig(options.env, { embedded: options.embedded });
  refuseReservationsShorterThan(accessConfig.reservationTtlMs, {
    TRANSCRIBE_SYNC_DEADLINE_MS: config.TRANSCRIBE_SYNC_DEADLINE_MS,
  });
  const embeddings = loadEmbeddingsConfig(options.env);
  const embedder = embeddings ? createEmbedder(embeddings, { cache: kv }) : undefined;

  const backends = grpcBackendsFromConfig(config, logger);
  // The usage report reads billing (in `npm start` too, where billing runs in-process behind real
  // gRPC): requests from billing.request-usage.v1, credits from the ledger. The access module's
  // own daily_requests record only rebuilds the Redis daily counter. The audit log first: the
  // access module records keys' changes and refusals in it (events, their outbox to
  // AUDIT_EVENTS_TOPIC, the retention sweep).
  const audit = createAuditLog({
    store,
    bus,
    clock,
    logger: logger.child({ component: 'audit' }),
    topic: config.AUDIT_EVENTS_TOPIC,
    retentionDays: config.AUDIT_RETENTION_DAYS,
    outboxIntervalMs: accessConfig.outboxIntervalMs,
  });
  const access = createAccessModule({
    store,
    kv,
    bus,
    clock,
    logger,
    audit,
    config: accessConfig,
    usageReader: createBillingUsageReader((request) => backends.billing.getUsage(request)),
  });
  await access.start();
  await audit.start();
  // Bulk jobs, watches and webhook secrets: the job service (services/jobs), over gRPC.
  const tls = grpcTlsFromConfig(config).client;
  const jobService = createJobServiceClient({
    address: config.JOBS_GRPC_ADDR,
    deadlineMs: config.JOB_SERVICE_DEADLINE_MS,
    streamDeadlineMs: 10 * config.JOB_SERVICE_DEADLINE_MS,
    credentials: tls.credentials,
    channelOptions: tls.channelOptions,
    logger,
  });
  // A workspace's deletion: every store of it, then its event to ACCOUNT_EVENTS_TOPIC (an outbox).
  const deletion = createWorkspaceDeletion({
    store,
    kv,
    bus,
    clock,
    logger: logger.child({ component: 'deletion' }),
    accounts: access.accounts,
    accountData: jobService.accountData,
    topic: config.ACCOUNT_EVENTS_TOPIC,
    outboxIntervalMs: accessConfig.outboxIntervalMs,
    flushRequestCounts: () => access.requestLog.flush(),
  });
  await deletion.start();
  let fanOut: FanOut & { stop?(): Promise<void> };
  const instanceId = options.instanceId ?? `${hostname()}-${randomUUID().slice(0, 8)}`;
  const directFanOut = createDirectFanOut({
    extractor: backends.extractor,
    concurrency: config.FANOUT_CONCURRENCY,
  });
  if ((options.fanOut ?? 'bus') === 'bus') {
    const kafkaFanOut = createKafkaFanOut({
      bus,
      instanceId,
      clock,
      logger: logger.child({ component: 'fan-out' }),
      workersGroupId: config.EXTRACT_WORKERS_GROUP,
      workersReachable: () =>
        backends.extractor.checkHealth(Math.min(1_000, config.HEALTH_CHECK_TIMEOUT_MS)).catch(() => false),
      jobsTopic: config.EXTRACT_JOBS_TOPIC,
      resultsTopic: config.EXTRACT_RESULTS_TOPIC,
      busTimeoutMs: config.FANOUT_BUS_TIMEOUT_MS,
      // No worker active (all extractors restarting) or the bus unreachable: the items go to the
      // extractor over gRPC instead of waiting out the deadline (README, "When a dependency misbehaves").
      fallback: directFanOut,
    });
    // Join the results group now: fail fast, and keep the first batch request fast.
    await kafkaFanOut.start();
    fanOut = kafkaFanOut;
  } else {
    fanOut = directFanOut;
  }

  let draining = false;
  const app = await buildApp({
    config,
    logger,
    access: access.access,
    credits: access.credits,
    idempotency: access.idempotency,
    ipLimiter: access.ipLimiter,
    readLimiter: access.readLimiter,
    accountStanding: access.accountStanding,
    accountProfile: access.accountProfile,
    usage: access.usageReader,
    apiKeys: access.apiKeys,
    members: access.members,
    retention: access.retention,
    backends,
    fanOut,
    jobs: jobService.jobs,
    watches: jobService.watches,
    kv,
    clock,
    pricing: accessConfig.pricing,
    webhookSecrets: jobService.webhookSecrets,
    audit,
    ...(embedder ? { embedder } : {}),
    readiness: async () => {
      if (draining || !backends.channelsHealthy()) return false;
      try {
        return await withTimeout(
          () => kv.ping().then(() => true),
          2_000,
          () => false,
        );
      } catch {
        return false;
      }
    },
  });
  const adminApp = await buildAdminApp({
    config,
    access,
    publicApp: app,
    jobs: jobService.jobs,
    watches: jobService.watches,
    webhookSecrets: jobService.webhookSecrets,
    audit,
    deletion,
    logger: logger.child({ listener: 'admin' }),
  });
  let address: string;
  let admin: { url: string; port: number };
  try {
    address = await app.listen({ port: config.PORT, host: config.HOST }).catch((err: unknown) => {
      throw portInUse(err, 'PORT', config.PORT);
    });
    admin = await listenAdmin(adminApp, config);
  } catch (err) {
    // Release what was started before a port turned out to be busy, then say which one it is.
    await adminApp.close().catch(() => {});
    await app.close().catch(() => {});
    await fanOut.stop?.().catch(() => {});
    await deletion.stop().catch(() => {});
    await audit.stop().catch(() => {});
    await access.stop().catch(() => {});
    jobService.close();
    backends.close();
    throw err;
  }
  const port = (app.server.address() as { port: number }).port;
  logger.info({ address, admin_address: admin.url }, 'gateway listening');

  return {
    url: `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${port}`,
    port,
    app,
    admin: { ...admin, app: adminApp },
    access,
    audit,
    generated,
    adminToken: accessConfig.adminToken,
    async stop() {
      draining = true;
      await adminApp.close();
      await app.close();
      await fanOut.stop?.();
      await deletion.stop();
      await audit.stop();
      await access.stop();
      jobService.close();
      backends.close();
    },
  };
}
