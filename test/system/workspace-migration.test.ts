/**
 * Today's accounts become workspaces of one, on the real engines: an account made before
 * workspaces (a confirmed dashboard user owning it, a primary and a named key, a balance), in the
 * MongoDB-compatible server and Redis, is opened by its person in the dashboard, which talks to the
 * gateway's admin API over HTTP as in a deployment. The person becomes the workspace's owner, once;
 * no key, credit or tier is lost, and both keys keep working.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createInProcessEventBus,
  createMongoDocumentStore,
  createRedisKeyValueStore,
  silentLogger,
} from '@subx/ports';
import type { DocumentStore, KeyValueStore } from '@subx/ports';
import { createLogger } from '@subx/service-kit';
import { describeWithEngine } from '@subx/testing/engines';
import { createAccessModule, type AccessModule } from '../../services/gateway/src/access/index.ts';
import { buildAdminApp } from '../../services/gateway/src/admin/listener.ts';
import { buildTestGateway, VIDEO_URL } from '../../services/gateway/test/http/support.ts';
import { buildDashboardApp } from '../../services/dashboard/src/app.ts';
import { loadDashboardConfig } from '../../services/dashboard/src/config.ts';
import { createGatewayClient } from '../../services/dashboard/src/gateway/client.ts';
import { hashPassword } from '../../services/dashboard/src/auth/passwords.ts';
import { Browserish } from '../../services/dashboard/test/support.ts';

const ADMIN_TOKEN = 'workspace-migration-admin-token-0123456789';
const PEPPER = 'workspace-migration-pepper-0123456789abcdef';
const EMAIL = 'before-workspaces@example.com';
const PASSWORD = 'a passphrase from before';

describeWithEngine('redis', 'accounts from before workspaces', (redisUrl) => {
  describeWithEngine('mongo', 'on the MongoDB-compatible server', (mongoUrl) => {
    const dbName = `workspaces_it_${randomUUID().slice(0, 8)}`;
    let store: ReturnType<typeof createMongoDocumentStore>;
    let kv: KeyValueStore;
    let access: AccessModule;
    let publicApp: FastifyInstance;
    let admin: FastifyInstance;
    let dashboard: FastifyInstance;

    beforeAll(async () => {
      store = createMongoDocumentStore({ url: mongoUrl, dbName });
      kv = createRedisKeyValueStore({ url: redisUrl });
      access = createAccessModule({
        store,
        kv,
        bus: createInProcessEventBus(),
        clock: { now: () => Date.now() },
        logger: silentLogger,
        config: { apiKeyPepper: PEPPER, adminToken: ADMIN_TOKEN },
      });
      await access.start();
      const gateway = await buildTestGateway({
        deps: { access: access.access, credits: access.credits, idempotency: access.idempotency },
      });
      publicApp = gateway.app;
      admin = await buildAdminApp({ config: gateway.config, access, publicApp });
      await admin.listen({ port: 0, host: '127.0.0.1' });
      const adminUrl = `http://127.0.0.1:${(admin.server.address() as { port: number }).port}`;
      const config = {
        ...loadDashboardConfig({
          ADMIN_TOKEN,
          GATEWAY_URL: adminUrl,
          DASHBOARD_PUBLIC_URL: 'http://dash.test',
        }),
        PASSWORD_SCRYPT_N: 1_024,
      };
      dashboard = await buildDashboardApp({
        config,
        kv,
        store: store as DocumentStore,
        gateway: createGatewayClient({ baseUrl: adminUrl, adminToken: ADMIN_TOKEN, timeoutMs: 5_000 }),
        mailer: { send: async () => {}, close: () => {} },
        logger: createLogger({ service: 'dashboard', level: 'silent' }),
      });
    });

    afterAll(async () => {
      await dashboard?.close();
      await admin?.close();
      await publicApp?.close();
      await access?.stop();
      await store?.dropDatabase().catch(() => undefined);
      await store?.close();
      await kv?.close();
    });

    it('makes the person the owner of their account, once, losing no key and no credit', async () => {
      // The account as it was before workspaces: made, topped up, a named key, its person confirmed.
      const made = await access.accounts.createAccount({ tier: 'pro', credits: 1_234, email: EMAIL });
      const accountId = made.account._id;
      const named = await access.apiKeys.create(
        accountId,
        { name: 'from before', scopes: ['transcripts:read'] },
        { actor: { type: 'operator', id: null } },
      );
      const userId = `usr_${randomUUID().replaceAll('-', '')}`;
      await store.collection('dashboard_users').insertOne({
        _id: userId,
        email: EMAIL,
        password_hash: await hashPassword(PASSWORD, 1_024),
        email_verified: true,
        account_id: accountId,
        operator: false,
        session_epoch: 0,
        created_at: new Date().toISOString(),
      });
      const members = () =>
        store.collection<{ _id: string; account_id: string; role: string }>('workspace_members');
      expect(await members().countDocuments({ account_id: accountId })).toBe(0);

      const b = new Browserish(dashboard);
      await b.get('/sign-in');
      expect((await b.post('/sign-in', { email: EMAIL, password: PASSWORD })).statusCode).toBe(303);
      for (let visit = 0; visit < 2; visit += 1) {
        const page = await b.get('/members');
        expect(page.statusCode).toBe(200);
        expect(page.body).toContain('<strong id="my-role">owner</strong>');
      }
      expect(await members().find({ account_id: accountId })).toEqual([
        expect.objectContaining({ member_id: userId, email: EMAIL, role: 'owner' }),
      ]);

      const after = await access.accounts.get(accountId);
      expect(after).toMatchObject({ tier: 'pro', credits: 1_234 });
      for (const key of [made.apiKey, named!.apiKey]) {
        const res = await publicApp.inject({
          method: 'POST',
          url: '/api/v1/extract',
          headers: { 'x-api-key': key },
          payload: { url: VIDEO_URL },
        });
        expect(res.statusCode).toBe(200);
      }
    });
  });
});
