/**
 * Rotating the gateway's two secrets without downtime (docs/operations.md "Rotating secrets"), on
 * the real access module and admin listener:
 * - ADMIN_TOKEN_PREVIOUS: while it is set, the old and the new admin token both work, any other is
 *   refused; once it is unset, only the new one.
 * - API_KEY_PEPPER_PREVIOUS: keys hashed under the old pepper still authenticate after the pepper
 *   changes, and their stored hash is rewritten under the new pepper on that first use, so they keep
 *   working once the previous pepper is dropped; a revoked key stays revoked. Webhook signing
 *   secrets, sealed under a key derived from the pepper, go through the same three steps: they
 *   read and sign throughout, and those read during the window are sealed again under the new one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createInMemoryDocumentStore, ManualClock, silentLogger } from '@subx/ports';
import type { DocumentStore } from '@subx/ports';
import { loadJobServiceConfig } from '../../../jobs/src/config.ts';
import { createWebhookModule } from '../../../jobs/src/webhooks/index.ts';
import { hashApiKey } from '../../src/access/api-key.ts';
import { TEST_ADMIN_TOKEN, TEST_PEPPER, startReplicas } from '../access/support.ts';
import type { Replicas } from '../access/support.ts';
import { buildAdminApp } from '../../src/admin/listener.ts';
import { buildTestGateway } from './support.ts';

const NEW_TOKEN = 'new-admin-token-abcdefghijklmnopqrstuvwxyz0123';
const NEW_PEPPER = 'new-pepper-abcdefghijklmnopqrstuvwxyz-0123456789';

const opened: { replicas: Replicas; apps: FastifyInstance[] }[] = [];
afterEach(async () => {
  for (const { replicas, apps } of opened.splice(0)) {
    for (const app of apps) await app.close();
    await replicas.stop();
  }
});

async function gateway(
  store: DocumentStore,
  config: NonNullable<Parameters<typeof startReplicas>[1]>['config'],
) {
  const replicas = await startReplicas(1, { store, ...(config ? { config } : {}) });
  const m = replicas.modules[0]!;
  const pub = await buildTestGateway({
    deps: { access: m.access, credits: m.credits, clock: replicas.clock },
  });
  const admin = await buildAdminApp({ config: pub.config, access: m, publicApp: pub.app });
  opened.push({ replicas, apps: [admin, pub.app] });
  return { admin, m };
}

const asAdmin = (
  admin: FastifyInstance,
  token: string,
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  payload?: object,
) =>
  admin.inject({
    method,
    url,
    headers: { authorization: `Bearer ${token}` },
    ...(payload ? { payload } : {}),
  });

describe('rotating ADMIN_TOKEN', () => {
  it('accepts the old and the new token while ADMIN_TOKEN_PREVIOUS is set, and nothing else', async () => {
    const store = createInMemoryDocumentStore();
    const { admin } = await gateway(store, { adminToken: NEW_TOKEN, adminTokenPrevious: TEST_ADMIN_TOKEN });
    for (const token of [NEW_TOKEN, TEST_ADMIN_TOKEN]) {
      const created = await asAdmin(admin, token, 'POST', '/admin/v1/accounts', { tier: 'free' });
      expect(created.statusCode, token).toBe(201);
    }
    for (const token of ['x'.repeat(40), `${NEW_TOKEN}x`, NEW_TOKEN.slice(0, -1)]) {
      const refused = await asAdmin(admin, token, 'POST', '/admin/v1/accounts', { tier: 'free' });
      expect(refused.statusCode, token).toBe(401);
    }
  });

  it('accepts only the new token once ADMIN_TOKEN_PREVIOUS is unset', async () => {
    const { admin } = await gateway(createInMemoryDocumentStore(), { adminToken: NEW_TOKEN });
    expect((await asAdmin(admin, NEW_TOKEN, 'POST', '/admin/v1/accounts', { tier: 'free' })).statusCode).toBe(
      201,
    );
    expect(
      (await asAdmin(admin, TEST_ADMIN_TOKEN, 'POST', '/admin/v1/accounts', { tier: 'free' })).statusCode,
    ).toBe(401);
  });
});

describe('rotating API_KEY_PEPPER', () => {
  it('keys made under the old pepper keep working through the rotation and after it', async () => {
    const store = createInMemoryDocumentStore();
    // Before: everything under the old pepper.
    const before = await gateway(store, {});
    const created = (
      await asAdmin(before.admin, TEST_ADMIN_TOKEN, 'POST', '/admin/v1/accounts', { tier: 'pro' })
    ).json();
    const revoked = (
      await asAdmin(before.admin, TEST_ADMIN_TOKEN, 'POST', '/admin/v1/accounts', { tier: 'pro' })
    ).json();
    expect(
      (
        await asAdmin(
          before.admin,
          TEST_ADMIN_TOKEN,
          'DELETE',
          `/admin/v1/accounts/${revoked.account_id}/api-key`,
        )
      ).statusCode,
    ).toBeLessThan(300);
    const stored = async (id: string) =>
      (await store
        .collection<{ _id: string; key: { hash: string | null } }>('accounts')
        .findOne({ _id: id }))!.key.hash;
    expect(await stored(created.account_id)).toBe(hashApiKey(created.api_key, TEST_PEPPER));

    // During: the new pepper, the old one as previous. The key verifies and moves to the new pepper.
    const during = await gateway(store, { apiKeyPepper: NEW_PEPPER, apiKeyPepperPrevious: TEST_PEPPER });
    expect(await during.m.access.authenticate(created.api_key)).toMatchObject({
      id: created.account_id,
      tier: 'pro',
    });
    expect(await stored(created.account_id)).toBe(hashApiKey(created.api_key, NEW_PEPPER));
    expect(await during.m.access.authenticate(revoked.api_key)).toBeNull();
    expect(await during.m.access.authenticate('sxk_v1_' + 'Z'.repeat(32))).toBeNull();

    // After: the previous pepper dropped; the key that was used during the rotation still works.
    const after = await gateway(store, { apiKeyPepper: NEW_PEPPER });
    expect(await after.m.access.authenticate(created.api_key)).toMatchObject({
      id: created.account_id,
      tier: 'pro',
    });
  });

  it('without the previous pepper a key stored under the old one is refused', async () => {
    const store = createInMemoryDocumentStore();
    const before = await gateway(store, {});
    const created = (
      await asAdmin(before.admin, TEST_ADMIN_TOKEN, 'POST', '/admin/v1/accounts', { tier: 'pro' })
    ).json();
    const after = await gateway(store, { apiKeyPepper: NEW_PEPPER });
    expect(await after.m.access.authenticate(created.api_key)).toBeNull();
  });
});

describe('rotating API_KEY_PEPPER with webhook signing secrets', () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 5, 9));
  const webhooksUnder = (store: DocumentStore, pepper: string, previousPepper?: string) =>
    createWebhookModule({
      store,
      clock,
      logger: silentLogger,
      config: loadJobServiceConfig({}, { embedded: true }),
      pepper,
      ...(previousPepper ? { previousPepper } : {}),
    }).secrets;

  it('reads and signs with the same secret before, during and after the rotation', async () => {
    const store = createInMemoryDocumentStore();
    const before = webhooksUnder(store, TEST_PEPPER);
    const secret = (await before.current('acct_a')).secret;
    await before.rotate('acct_a');
    const [rotatedSecret, previousSecret] = await before.signingSecrets('acct_a');
    expect(previousSecret).toBe(secret);

    const during = webhooksUnder(store, NEW_PEPPER, TEST_PEPPER);
    expect((await during.current('acct_a')).secret).toBe(rotatedSecret);
    expect(await during.signingSecrets('acct_a')).toEqual([rotatedSecret, secret]);

    const after = webhooksUnder(store, NEW_PEPPER);
    expect((await after.current('acct_a')).secret).toBe(rotatedSecret);
    expect(await after.signingSecrets('acct_a')).toEqual([rotatedSecret, secret]);
  });

  it('a secret not read during the window is unreadable after it, and a rotation replaces it', async () => {
    const store = createInMemoryDocumentStore();
    await webhooksUnder(store, TEST_PEPPER).current('acct_b');
    const after = webhooksUnder(store, NEW_PEPPER);
    await expect(after.current('acct_b')).rejects.toThrow(/cannot be decrypted/);
    const replaced = await after.rotate('acct_b');
    expect(replaced.previous_secret_expires_at).toBeNull();
    expect(await after.signingSecrets('acct_b')).toEqual([replaced.secret]);
  });
});
