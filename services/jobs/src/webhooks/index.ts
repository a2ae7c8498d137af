/**
 * Signed webhooks for bulk jobs (README.md here): per-account signing secrets, the delivery outbox
 * and the worker that sends it. The job runner calls `enqueue`, `stateOf` and `checkTarget`; the
 * public and admin routes use `secrets`; start-gateway.ts starts and stops the worker.
 */
import type { Clock, DocumentStore } from '@subx/ports';
import type { HostLookup } from '@subx/webhooks';
import type { Logger } from '@subx/ports';
import type { WebhookConfig } from './config.ts';
import { createWebhookDeliveries } from './deliveries.ts';
import type { WebhookDeliveries } from './deliveries.ts';
import { createWebhookSecrets } from './secrets.ts';
import type { WebhookSecrets } from './secrets.ts';

export type { WebhookConfig } from './config.ts';
/**
 * What the job runner reads and writes (the job's `webhook` field is a
 * WebhookDeliveryState).
 * @public
 */
export type { WebhookDeliveries, WebhookDeliveryState, WebhookEventType } from './deliveries.ts';
export { PREVIOUS_SECRET_GRACE_MS, type WebhookSecrets } from './secrets.ts';

export interface WebhookModuleDeps {
  store: DocumentStore;
  clock: Clock;
  logger: Logger;
  config: WebhookConfig;
  /** API_KEY_PEPPER: the key that seals the secrets at rest is derived from it (HKDF). */
  pepper: string;
  /** API_KEY_PEPPER_PREVIOUS while the pepper is rotated: secrets sealed under it are sealed again. */
  previousPepper?: string;
  /** DNS for target checks; default the system resolver. */
  lookup?: HostLookup;
  /** Spread of retries (0..1 → up to 10% later); default random. */
  jitter?: () => number;
  /** How long deliveries that ended stay readable; default 30 days (DELIVERY_RETENTION_MS). */
  retentionMs?: number;
}

export interface WebhookModule extends WebhookDeliveries {
  secrets: WebhookSecrets;
  /** Claims and sends what is due now; resolves when those attempts are recorded (tests, tools). */
  tick(): Promise<number>;
  /** Deletes deliveries that ended longer ago than the retention (the poller does it hourly). */
  prune(): Promise<number>;
  /** Creates the indexes and starts polling every WEBHOOK_POLL_MS. */
  start(): Promise<void>;
  /** Stops polling; waits for attempts in flight, bounded by the attempt timeout. */
  stop(): Promise<void>;
}

export function createWebhookModule(deps: WebhookModuleDeps): WebhookModule {
  const secrets = createWebhookSecrets({
    store: deps.store,
    clock: deps.clock,
    pepper: deps.pepper,
    ...(deps.previousPepper ? { previousPepper: deps.previousPepper } : {}),
  });
  const worker = createWebhookDeliveries({
    store: deps.store,
    clock: deps.clock,
    logger: deps.logger,
    config: deps.config,
    secrets,
    ...(deps.lookup ? { lookup: deps.lookup } : {}),
    ...(deps.jitter ? { jitter: deps.jitter } : {}),
    ...(deps.retentionMs ? { retentionMs: deps.retentionMs } : {}),
  });
  return {
    secrets,
    enqueue: (input) => worker.enqueue(input),
    stateOf: (subject) => worker.stateOf(subject),
    checkTarget: (url) => worker.checkTarget(url),
    tick: () => worker.tick(),
    prune: () => worker.prune(),
    async start() {
      await worker.init();
      worker.start();
    },
    stop: () => worker.stop(),
  };
}
