/**
 * The webhook variables, a fragment spread into the gateway's ConfigSchema (src/config.ts) so they
 * are parsed, reported and redacted with everything else. Bounds keep a typo from turning the
 * worker into a busy loop (poll) or an unbounded wait (timeout).
 */
import { z } from 'zod';
import { boolEnv, durationMsBetween, positiveInt } from '@subx/service-kit';

export const webhookEnv = {
  /**
   * Deliver to private, loopback and link-local addresses too: only for self-hosted setups whose
   * receivers live inside the network (and for tests against 127.0.0.1). Off, such targets are
   * refused when the job is created and again before every attempt (DNS rebinding).
   */
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: boolEnv.default(false),
  /** Bound on one delivery attempt, connection to the last byte read (1 s .. 60 s). */
  WEBHOOK_TIMEOUT_MS: durationMsBetween(1_000, 60_000).default(10_000),
  /** How often a gateway looks for due deliveries (100 ms .. 60 s). */
  WEBHOOK_POLL_MS: durationMsBetween(100, 60_000).default(1_000),
  /** Attempts in flight at once per gateway process (1 .. 256). */
  WEBHOOK_CONCURRENCY: positiveInt.pipe(z.number().max(256, { error: 'must be at most 256' })).default(8),
  /**
   * Of those, attempts to one account's receivers (1 .. 256): a few slow receivers cannot take
   * every slot, so other accounts' deliveries keep going.
   */
  WEBHOOK_CONCURRENCY_PER_ACCOUNT: positiveInt
    .pipe(z.number().max(256, { error: 'must be at most 256' }))
    .default(2),
};

export interface WebhookConfig {
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: boolean;
  WEBHOOK_TIMEOUT_MS: number;
  WEBHOOK_POLL_MS: number;
  WEBHOOK_CONCURRENCY: number;
  WEBHOOK_CONCURRENCY_PER_ACCOUNT: number;
}
