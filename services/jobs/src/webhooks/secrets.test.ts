import { describe, expect, it } from 'vitest';
import { createInMemoryDocumentStore, ManualClock } from '@subx/ports';
import { isSigningSecret } from '@subx/webhooks';
import { createSecretBox } from './secret-box.ts';
import { createWebhookSecrets, PREVIOUS_SECRET_GRACE_MS, WEBHOOK_SECRETS_COLLECTION } from './secrets.ts';

const PEPPER = 'a-test-pepper-of-at-least-32-characters!!';

function setup() {
  const store = createInMemoryDocumentStore();
  const clock = new ManualClock(Date.UTC(2026, 5, 1, 12));
  const secrets = createWebhookSecrets({ store, clock, pepper: PEPPER });
  const raw = store.collection<{ _id: string; [k: string]: unknown }>(WEBHOOK_SECRETS_COLLECTION);
  return { store, clock, secrets, raw };
}

describe('webhook signing secrets', () => {
  it('creates one on first read, then answers the same one', async () => {
    const { secrets } = setup();
    const first = await secrets.current('acc_1');
    expect(isSigningSecret(first.secret)).toBe(true);
    expect(first).toEqual({
      secret: first.secret,
      created_at: '2026-06-01T12:00:00.000Z',
      previous_secret_expires_at: null,
    });
    expect(await secrets.current('acc_1')).toEqual(first);
    expect(await secrets.signingSecrets('acc_1')).toEqual([first.secret]);
    expect((await secrets.current('acc_2')).secret).not.toBe(first.secret);
  });

  it('a rotation signs with the new and the previous secret for 24 hours, then with the new one only', async () => {
    const { secrets, clock } = setup();
    const old = await secrets.current('acc_1');
    clock.advance(60_000);
    const rotated = await secrets.rotate('acc_1');
    expect(rotated.secret).not.toBe(old.secret);
    expect(rotated.created_at).toBe('2026-06-01T12:01:00.000Z');
    expect(rotated.previous_secret_expires_at).toBe(
      new Date(Date.UTC(2026, 5, 1, 12, 1) + PREVIOUS_SECRET_GRACE_MS).toISOString(),
    );
    expect(await secrets.current('acc_1')).toEqual(rotated);
    expect(await secrets.signingSecrets('acc_1')).toEqual([rotated.secret, old.secret]);

    clock.advance(PREVIOUS_SECRET_GRACE_MS - 1);
    expect(await secrets.signingSecrets('acc_1')).toEqual([rotated.secret, old.secret]);
    clock.advance(1);
    expect(await secrets.signingSecrets('acc_1')).toEqual([rotated.secret]);
    expect((await secrets.current('acc_1')).previous_secret_expires_at).toBeNull();
  });

  it('metadata answers whether a secret exists and its dates, never the secret, creating none', async () => {
    const { secrets, clock, raw } = setup();
    expect(await secrets.metadata('acc_1')).toEqual({
      exists: false,
      created_at: null,
      previous_secret_expires_at: null,
    });
    expect(await raw.countDocuments({})).toBe(0);
    await secrets.current('acc_1');
    clock.advance(60_000);
    const rotated = await secrets.rotate('acc_1');
    const metadata = await secrets.metadata('acc_1');
    expect(metadata).toEqual({
      exists: true,
      created_at: rotated.created_at,
      previous_secret_expires_at: rotated.previous_secret_expires_at,
    });
    expect(JSON.stringify(metadata)).not.toContain(rotated.secret);
  });

  it('a second rotation drops the first secret at once: only the last two ever sign', async () => {
    const { secrets } = setup();
    const a = await secrets.rotate('acc_1');
    expect(a.previous_secret_expires_at).toBeNull(); // the account's first secret
    const b = await secrets.rotate('acc_1');
    const c = await secrets.rotate('acc_1');
    expect(await secrets.signingSecrets('acc_1')).toEqual([c.secret, b.secret]);
  });

  it('concurrent first reads and rotations settle on one document without losing a rotation', async () => {
    const { secrets } = setup();
    const reads = await Promise.all([1, 2, 3, 4].map(() => secrets.current('acc_1')));
    expect(new Set(reads.map((r) => r.secret)).size).toBe(1);
    const rotations = await Promise.all([1, 2].map(() => secrets.rotate('acc_1')));
    const now = await secrets.signingSecrets('acc_1');
    // Both rotations applied, one after the other: the last one's secret is current, the other's previous.
    expect(now).toHaveLength(2);
    expect(rotations.map((r) => r.secret).sort()).toEqual([...now].sort());
  });

  it('stores the secret sealed (AES-256-GCM), never in clear, bound to its account and the pepper', async () => {
    const { secrets, raw, store, clock } = setup();
    const { secret } = await secrets.current('acc_1');
    const doc = await raw.findOne({ _id: 'acc_1' });
    const stored = JSON.stringify(doc);
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain(secret.slice('whsec_'.length));
    const sealed = (doc!.current as { sealed: string }).sealed;
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    const box = createSecretBox(PEPPER);
    expect(box.open(sealed, 'acc_1')).toBe(secret);
    expect(() => box.open(sealed, 'acc_2')).toThrow();
    expect(() => createSecretBox(`${PEPPER}x`).open(sealed, 'acc_1')).toThrow();
    // Read under another pepper: a clear error that names no secret.
    const other = createWebhookSecrets({ store, clock, pepper: `${PEPPER}x` });
    await expect(other.current('acc_1')).rejects.toThrow(/cannot be decrypted.*API_KEY_PEPPER/);
    // A rotation under the new pepper is the way out: the unreadable secret is not kept alongside.
    const rotated = await other.rotate('acc_1');
    expect(rotated.previous_secret_expires_at).toBeNull();
    expect(await other.signingSecrets('acc_1')).toEqual([rotated.secret]);
  });
});
