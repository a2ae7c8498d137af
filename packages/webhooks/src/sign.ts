import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { isSigningSecret } from './secret.ts';

/** The three headers of the Standard Webhooks specification, plus the body's content type. */
export interface SignedWebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
  'content-type': 'application/json';
}

export interface SignWebhookInput {
  /** Stable across retries of one event, so receivers can drop repeats (`msg_…` when omitted). */
  id?: string;
  /** The payload exactly as it will be sent: the signature covers these bytes. */
  body: string;
  /**
   * Every secret currently valid, newest first: during a rotation the previous secret keeps
   * signing alongside the new one, so a receiver that still holds the old one verifies too (the
   * specification allows several space-separated signatures).
   */
  secrets: readonly string[];
  now?: Date;
}

export function signWebhook(input: SignWebhookInput): SignedWebhookHeaders {
  if (input.secrets.length === 0) throw new Error('signWebhook: no signing secret');
  for (const secret of input.secrets) {
    if (!isSigningSecret(secret)) throw new Error('signWebhook: a secret is not of the form whsec_<base64>');
  }
  const id = input.id ?? `msg_${randomUUID().replaceAll('-', '')}`;
  const now = input.now ?? new Date();
  // The specification's timestamp is whole seconds; sign the same instant the header carries.
  const at = new Date(Math.floor(now.getTime() / 1000) * 1000);
  const signatures = input.secrets.map((secret) => new Webhook(secret).sign(id, at, input.body));
  return {
    'webhook-id': id,
    'webhook-timestamp': String(at.getTime() / 1000),
    'webhook-signature': signatures.join(' '),
    'content-type': 'application/json',
  };
}
