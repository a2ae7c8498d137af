import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { describeWithEngine } from '@subx/testing/engines';
import { describeDocumentStoreContract } from '../src/document-store/contract.ts';
import { createMongoDocumentStore } from '../src/document-store/mongo.ts';

const freshDbName = (): string => `t_${randomUUID().replaceAll('-', '')}`;

describeWithEngine('mongo', 'MongoDB document store', (url) => {
  describeDocumentStoreContract('mongo', async () => {
    const store = createMongoDocumentStore({ url, dbName: freshDbName() });
    // Each test gets its own database; drop it on close so a long-lived server does not fill up.
    return {
      ...store,
      async close() {
        await store.dropDatabase().catch(() => undefined);
        await store.close();
      },
    };
  });

  describe('across processes', () => {
    it('keeps conditional updates atomic between two independent clients of one database', async () => {
      // Two clients stand in for two processes: each has its own connection pool and in-process queue.
      const dbName = freshDbName();
      const first = createMongoDocumentStore({ url, dbName });
      const second = createMongoDocumentStore({ url, dbName });
      try {
        const wallets = [first, second].map((s) => s.collection<{ _id: string; balance: number }>('wallets'));
        await wallets[0]!.insertOne({ _id: 'w', balance: 20 });
        const results = await Promise.all(
          Array.from({ length: 60 }, (_, i) =>
            wallets[i % 2]!.findOneAndUpdate({ _id: 'w', balance: { $gte: 1 } }, { $inc: { balance: -1 } }),
          ),
        );
        expect(results.filter((r) => r !== null)).toHaveLength(20);
        expect((await wallets[1]!.findOne({ _id: 'w' }))!.balance).toBe(0);
      } finally {
        await first.dropDatabase().catch(() => undefined);
        await Promise.all([first.close(), second.close()]);
      }
    });
  });
});
