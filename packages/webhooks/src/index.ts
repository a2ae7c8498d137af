export { generateSigningSecret, isSigningSecret, SIGNING_SECRET_PREFIX } from './secret.ts';
export { signWebhook, type SignWebhookInput, type SignedWebhookHeaders } from './sign.ts';
export {
  isPublicAddress,
  resolveWebhookTarget,
  WebhookTargetRefusedError,
  MAX_WEBHOOK_URL_LENGTH,
  type HostLookup,
  type ResolvedWebhookTarget,
  type WebhookTargetPolicy,
  type WebhookTargetRefusal,
} from './target-policy.ts';
export {
  deliverWebhook,
  type DeliverWebhookInput,
  type WebhookAttempt,
  type WebhookAttemptOutcome,
} from './deliver.ts';
export { MAX_DELIVERY_ATTEMPTS, RETRY_DELAYS_MS, nextRetryDelayMs } from './schedule.ts';
