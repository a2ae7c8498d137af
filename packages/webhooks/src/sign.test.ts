import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { generateSigningSecret, isSigningSecret } from './secret.ts';
import { signWebhook } from './sign.ts';

const body = JSON.stringify({ type: 'job.completed', data: { job_id: 'job_1' } });

describe('signing secrets', () => {
  it('are whsec_ and 32 random bytes, different every time', () => {
    const a = generateSigningSecret();
    const b = generateSigningSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(a).not.toBe(b);
    expect(isSigningSecret(a)).toBe(true);
  });

  it('refuses what is not one', () => {
    for (const bad of ['', 'whsec_', 'sk_abc', 'whsec_!!!!', `whsec_${Buffer.alloc(8).toString('base64')}`]) {
      expect(isSigningSecret(bad)).toBe(false);
    }
    expect(() => signWebhook({ body, secrets: ['nope'] })).toThrow(/whsec_/);
    expect(() => signWebhook({ body, secrets: [] })).toThrow(/no signing secret/);
  });
});

describe('signWebhook, verified by the Standard Webhooks reference library', () => {
  it('signs id, timestamp and body so a receiver holding the secret verifies them', () => {
    const secret = generateSigningSecret();
    const headers = signWebhook({ id: 'msg_1', body, secrets: [secret], now: new Date(1_790_000_000_500) });
    expect(headers['webhook-id']).toBe('msg_1');
    expect(headers['webhook-timestamp']).toBe('1790000000');
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    // the library checks the timestamp against its own clock: sign "now" for the happy path
    const fresh = signWebhook({ body, secrets: [secret] });
    expect(new Webhook(secret).verify(body, { ...fresh })).toEqual(JSON.parse(body));
  });

  it('a changed body, another secret or an old timestamp does not verify', () => {
    const secret = generateSigningSecret();
    const headers = signWebhook({ body, secrets: [secret] });
    expect(() => new Webhook(secret).verify(body.replace('job_1', 'job_2'), { ...headers })).toThrow(
      WebhookVerificationError,
    );
    expect(() => new Webhook(generateSigningSecret()).verify(body, { ...headers })).toThrow(
      WebhookVerificationError,
    );
    const stale = signWebhook({ body, secrets: [secret], now: new Date(Date.now() - 3_600_000) });
    expect(() => new Webhook(secret).verify(body, { ...stale })).toThrow(/too old/i);
  });

  it('during a rotation both the new and the previous secret verify the same delivery', () => {
    const previous = generateSigningSecret();
    const current = generateSigningSecret();
    const headers = signWebhook({ body, secrets: [current, previous] });
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(current).verify(body, { ...headers })).toBeTruthy();
    expect(new Webhook(previous).verify(body, { ...headers })).toBeTruthy();
  });

  it('a generated id is stable for the caller to reuse on retries', () => {
    const secret = generateSigningSecret();
    const first = signWebhook({ body, secrets: [secret] });
    expect(first['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    const retry = signWebhook({ id: first['webhook-id'], body, secrets: [secret] });
    expect(retry['webhook-id']).toBe(first['webhook-id']);
  });
});
