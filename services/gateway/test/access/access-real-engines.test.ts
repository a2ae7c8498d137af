/**
 * The key access-control guarantees against real engines: Redis for counters and key-cache
 * invalidation, the MongoDB-compatible server for accounts and the credit outbox. Each "replica"
 * has its own Redis and MongoDB connections, as separate gateway processes would.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithEngine } from '@subx/testing/engines';
import { AppError } from '@subx/errors';
import {
  ManualClock,
  createInProcessEventBus,
  createMongoDocumentStore,
  createRedisKeyValueStore,
} from '@subx/ports';
import type { EventBus, KeyValueStore } from '@subx/ports';
import { createAccessModule } from '../../src/access/index.ts';
import type { AccessModule } from '../../src/access/index.ts';
import type { AccountDoc } from '../../src/access/accounts.ts';
import { silentLogger } from '@subx/ports';

const PEPPER = 'integration-pepper-0123456789-abcdefghij';

async function codeOf(promise: unknown): Promise<string> {
  try {
    await promise;
    return 'OK';
  } catch (err) {
    if (err instanceof AppError) return err.code;
    throw err;
  }
}

describeWithEngine('redis', 'access control on real Redis', (redisUrl) => {
  describeWithEngine('mongo', 'and the MongoDB-compatible server', (mongoUrl) => {
    const dbName = `access_it_${randomUUID().slice(0, 8)}`;
    // Real Redis keeps real time for TTLs, so the injected clock starts near now (at 23:00 UTC
    // today, so that the test can cross a real-looking midnight).
    const today = new Date();
    const clock = new ManualClock(
      Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate(), 23),
    );
    const stores: ReturnType<typeof createMongoDocumentStore>[] = [];
    const kvs: KeyValueStore[] = [];
    const bus: EventBus = createInProcessEventBus();
    let a: AccessModule;
    let b: AccessModule;

    function replica(): AccessModule {
      const store = createMongoDocumentStore({ url: mongoUrl, dbName });
      const kv = createRedisKeyValueStore({ url: redisUrl });
      stores.push(store);
      kvs.push(kv);
      return createAccessModule({
        store,
        kv,
        bus,
        clock,
        logger: silentLogger,
        config: { apiKeyPepper: PEPPER, adminToken: 'unused-admin-token', outboxIntervalMs: 3_600_000 },
      });
    }

    beforeAll(async () => {
      a = replica();
      b = replica();
      await a.start();
      await b.start();
    });

    afterAll(async () => {
      await a?.stop();
      await b?.stop();
      await stores[0]?.dropDatabase();
      for (const s of stores) await s.close();
      for (const kv of kvs) await kv.close();
      await bus.close();
    });

    it('refuses a regenerated and then a revoked key on the other replica on the very next request', async () => {
      const { account, apiKey } = await a.accounts.createAccount({ tier: 'pro' });
      expect(await codeOf(b.access.admit({ apiKey, operation: 'extract' }))).toBe('OK');
      expect(await codeOf(b.access.admit({ apiKey, operation: 'extract' }))).toBe('OK');
      const newKey = await a.accounts.regenerateKey(account._id);
      expect(await codeOf(b.access.admit({ apiKey, operation: 'extract' }))).toBe('UNAUTHORIZED');
      expect(await codeOf(b.access.admit({ apiKey: newKey!, operation: 'extract' }))).toBe('OK');
      await a.accounts.revokeKey(account._id);
      expect(await codeOf(b.access.admit({ apiKey: newKey!, operation: 'extract' }))).toBe('UNAUTHORIZED');
      expect(await codeOf(a.access.admit({ apiKey: newKey!, operation: 'extract' }))).toBe('UNAUTHORIZED');
    });

    it('applies a tier change on the other replica at once', async () => {
      const { account, apiKey } = await a.accounts.createAccount({ tier: 'free' });
      expect(await codeOf(b.access.admit({ apiKey, operation: 'summarize' }))).toBe('TIER_REQUIRED');
      await a.accounts.update(account._id, { tier: 'pro' });
      expect(await codeOf(b.access.admit({ apiKey, operation: 'summarize' }))).toBe('OK');
    });

    it('admits exactly 100 of 150 concurrent requests of a free key across two replicas', async () => {
      const { apiKey } = await a.accounts.createAccount({ tier: 'free' });
      const codes = await Promise.all(
        Array.from({ length: 150 }, (_, i) =>
          codeOf((i % 2 ? a : b).access.admit({ apiKey, operation: 'extract' })),
        ),
      );
      expect(codes.filter((c) => c === 'OK')).toHaveLength(100);
      expect(codes.filter((c) => c === 'RATE_LIMITED')).toHaveLength(50);
    });

    it('starts a new daily window at 00:00 UTC', async () => {
      const start = clock.now();
      const { apiKey } = await a.accounts.createAccount({ tier: 'free' });
      for (let i = 0; i < 100; i += 1) await a.access.admit({ apiKey, operation: 'batch' });
      expect(await codeOf(b.access.admit({ apiKey, operation: 'extract' }))).toBe('RATE_LIMITED');
      clock.set(start + 3_600_000);
      const next = await b.access.admit({ apiKey, operation: 'extract' });
      expect(next.rateLimit.remaining).toBe(99);
      clock.set(start);
    });

    it('lets exactly 10 of 50 concurrent 1-credit reservations through on a balance of 10', async () => {
      const { account } = await a.accounts.createAccount({ tier: 'pro', credits: 10 });
      const results = await Promise.allSettled(
        Array.from({ length: 50 }, (_, i) =>
          (i % 2 ? a : b).credits.reserve({
            accountId: account._id,
            operation: 'batch',
            amount: 1,
            requestId: `r${i}`,
          }),
        ),
      );
      const ok = results.filter((r) => r.status === 'fulfilled').map((r) => r.value);
      expect(ok).toHaveLength(10);
      for (const r of results) {
        if (r.status === 'rejected') expect((r.reason as AppError).code).toBe('INSUFFICIENT_CREDITS');
      }
      await Promise.all(ok.map((r) => r.commit(1)));
      const doc = (await stores[0]!.collection<AccountDoc>('accounts').findOne({ _id: account._id }))!;
      expect(doc.credits).toBe(0);
      expect(doc.holds).toEqual({});
      const committed = await stores[0]!
        .collection('outbox')
        .find({ account_id: account._id, state: 'committed' });
      expect(committed).toHaveLength(10);
      expect(committed.reduce((n, d) => n + (d.charged as number), 0)).toBe(10);
      // The relay was kicked by the commits; a flush settles whatever is still pending.
      await a.outboxRelay.flush();
      expect(
        await stores[0]!
          .collection('outbox')
          .countDocuments({ account_id: account._id, outbox_status: 'sent' }),
      ).toBe(10);
    });
  });
});
