/**
 * Webhook deliveries (services/gateway/src/webhooks): each attempt and how each delivery ended.
 * Names follow Prometheus conventions (`_total` counters, `_seconds` units), made with service-kit's
 * registry like every metric; the catalogue is in packages/service-kit/README.md, the alerts that read them in deploy/helm/subx/templates/prometheusrule.yaml.
 */
import { counter, histogram } from '@subx/service-kit';

/**
 * One webhook delivery attempt: `outcome` is how it ended (delivered, http_error, redirect,
 * timeout, network_error, refused: the target policy said no), with its duration.
 */
export function observeWebhookAttempt(outcome: string, seconds: number): void {
  counter('subx_webhook_attempts_total', 'Webhook delivery attempts, by how each ended.', ['outcome']).inc({
    outcome,
  });
  histogram(
    'subx_webhook_attempt_duration_seconds',
    'Duration of one webhook delivery attempt (target check, connection and answer).',
    ['outcome'],
  ).observe({ outcome }, seconds);
}

/** A webhook delivery that ended: delivered (a 2xx), or failed (retries exhausted, 410, target refused). */
export function countWebhookDelivery(outcome: 'delivered' | 'failed'): void {
  counter('subx_webhook_deliveries_total', 'Webhook deliveries that ended, by outcome.', ['outcome']).inc({
    outcome,
  });
}
