import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DuplicateKeyError, type Collection, type DocumentStore } from './port.ts';

interface Account {
  _id: string;
  name: string;
  balance: number;
  tier?: string | null;
  profile?: { country: string; age?: number };
  createdAt?: Date;
  [key: string]: unknown;
}

const ids = (docs: readonly { _id: string }[]): string[] => docs.map((d) => d._id);

/**
 * The DocumentStore port's behaviour, run against one adapter. `makeStore` returns a store on a
 * fresh, empty database (`t_<uuid>` for real servers); it is closed after each test.
 */
export function describeDocumentStoreContract(name: string, makeStore: () => Promise<DocumentStore>): void {
  describe(`DocumentStore contract: ${name}`, () => {
    let store: DocumentStore;
    let accounts: Collection<Account>;

    beforeEach(async () => {
      store = await makeStore();
      accounts = store.collection<Account>(`accounts_${randomUUID().slice(0, 8)}`);
    });

    afterEach(async () => {
      await store.close();
    });

    const seed = async (): Promise<void> => {
      const docs: Account[] = [
        { _id: 'a', name: 'Ada', balance: 10, tier: 'pro', profile: { country: 'GB', age: 36 } },
        { _id: 'b', name: 'Bob', balance: 0, tier: 'free', profile: { country: 'US' } },
        { _id: 'c', name: 'Cy', balance: 25, tier: null, profile: { country: 'GB', age: 51 } },
        { _id: 'd', name: 'Di', balance: 5 },
      ];
      for (const doc of docs) await accounts.insertOne(doc);
    };

    it('pings', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });

    it('inserts, finds, updates and deletes, returning copies', async () => {
      const createdAt = new Date('2026-01-02T03:04:05.678Z');
      const doc: Account = { _id: 'acc-1', name: 'Ada', balance: 3, profile: { country: 'GB' }, createdAt };
      await accounts.insertOne(doc);
      expect(doc).toEqual({ _id: 'acc-1', name: 'Ada', balance: 3, profile: { country: 'GB' }, createdAt });

      const found = await accounts.findOne({ _id: 'acc-1' });
      expect(found).toEqual(doc);
      expect(found!.createdAt).toBeInstanceOf(Date);
      found!.profile!.country = 'FR';
      expect((await accounts.findOne({ _id: 'acc-1' }))!.profile!.country).toBe('GB');

      const update = await accounts.updateOne({ _id: 'acc-1' }, { $set: { name: 'Ada L.' } });
      expect(update).toEqual({ matchedCount: 1, modifiedCount: 1, upsertedId: null });
      const unchanged = await accounts.updateOne({ _id: 'acc-1' }, { $set: { name: 'Ada L.' } });
      expect(unchanged).toEqual({ matchedCount: 1, modifiedCount: 0, upsertedId: null });
      const none = await accounts.updateOne({ _id: 'nope' }, { $set: { name: 'x' } });
      expect(none).toEqual({ matchedCount: 0, modifiedCount: 0, upsertedId: null });
      expect((await accounts.findOne({ _id: 'acc-1' }))!.name).toBe('Ada L.');

      expect(await accounts.deleteOne({ _id: 'nope' })).toEqual({ deletedCount: 0 });
      expect(await accounts.deleteOne({ _id: 'acc-1' })).toEqual({ deletedCount: 1 });
      expect(await accounts.findOne({ _id: 'acc-1' })).toBeNull();
    });

    it('rejects a duplicate _id with DuplicateKeyError', async () => {
      await accounts.insertOne({ _id: 'x', name: 'one', balance: 0 });
      await expect(accounts.insertOne({ _id: 'x', name: 'two', balance: 0 })).rejects.toBeInstanceOf(
        DuplicateKeyError,
      );
      expect((await accounts.findOne({ _id: 'x' }))!.name).toBe('one');
    });

    it('filters with equality, dotted paths and every operator', async () => {
      await seed();
      const q = async (filter: Parameters<typeof accounts.find>[0]) =>
        ids(await accounts.find(filter, { sort: { _id: 1 } }));
      expect(await q({ name: 'Bob' })).toEqual(['b']);
      expect(await q({ 'profile.country': 'GB' })).toEqual(['a', 'c']);
      expect(await q({ 'profile.age': { $gte: 40 } })).toEqual(['c']);
      expect(await q({ balance: { $eq: 10 } })).toEqual(['a']);
      expect(await q({ balance: { $ne: 10 } })).toEqual(['b', 'c', 'd']);
      expect(await q({ balance: { $gt: 5 } })).toEqual(['a', 'c']);
      expect(await q({ balance: { $gte: 5 } })).toEqual(['a', 'c', 'd']);
      expect(await q({ balance: { $lt: 5 } })).toEqual(['b']);
      expect(await q({ balance: { $lte: 5 } })).toEqual(['b', 'd']);
      expect(await q({ balance: { $gt: 0, $lt: 25 } })).toEqual(['a', 'd']);
      expect(await q({ tier: { $in: ['pro', 'free'] } })).toEqual(['a', 'b']);
      // A missing field is not in the list, so $nin matches it (as MongoDB does).
      expect(await q({ tier: { $nin: ['pro', 'free'] } })).toEqual(['c', 'd']);
      expect(await q({ tier: { $nin: [] } })).toEqual(['a', 'b', 'c', 'd']);
      expect(await q({ tier: { $exists: true } })).toEqual(['a', 'b', 'c']);
      expect(await q({ tier: { $exists: false } })).toEqual(['d']);
      expect(await q({ 'profile.age': { $exists: true } })).toEqual(['a', 'c']);
      expect(await q({ tier: null })).toEqual(['c', 'd']);
      expect(await q({ name: { $gte: 'B', $lt: 'D' } })).toEqual(['b', 'c']);
      expect(await q({ 'profile.country': 'GB', balance: { $gte: 20 } })).toEqual(['c']);
      expect(await q({})).toEqual(['a', 'b', 'c', 'd']);
    });

    it('compares dates', async () => {
      const base = Date.UTC(2026, 0, 1);
      for (let i = 0; i < 3; i++) {
        await accounts.insertOne({
          _id: `d${i}`,
          name: 'n',
          balance: 0,
          createdAt: new Date(base + i * 1000),
        });
      }
      const after = await accounts.find({ createdAt: { $gt: new Date(base) } }, { sort: { createdAt: -1 } });
      expect(ids(after)).toEqual(['d2', 'd1']);
      expect(ids(await accounts.find({ createdAt: new Date(base + 1000) }))).toEqual(['d1']);
    });

    it('sorts, skips and limits, and counts', async () => {
      await seed();
      expect(ids(await accounts.find({}, { sort: { balance: -1 } }))).toEqual(['c', 'a', 'd', 'b']);
      expect(ids(await accounts.find({}, { sort: { balance: 1 }, skip: 1, limit: 2 }))).toEqual(['d', 'a']);
      expect(ids(await accounts.find({}, { sort: { 'profile.country': 1, balance: -1 } }))).toEqual([
        'd',
        'c',
        'a',
        'b',
      ]);
      expect(await accounts.countDocuments({})).toBe(4);
      expect(await accounts.countDocuments({ balance: { $gt: 0 } })).toBe(3);
      expect(await accounts.countDocuments({ name: 'nobody' })).toBe(0);
    });

    it('applies $set, $unset and $inc on dotted paths', async () => {
      await seed();
      await accounts.updateOne(
        { _id: 'a' },
        { $set: { 'profile.country': 'FR', 'stats.logins': 1 }, $unset: { tier: '' }, $inc: { balance: 5 } },
      );
      const a = await accounts.findOne({ _id: 'a' });
      expect(a).toEqual({
        _id: 'a',
        name: 'Ada',
        balance: 15,
        profile: { country: 'FR', age: 36 },
        stats: { logins: 1 },
      });
      await accounts.updateOne({ _id: 'a' }, { $inc: { 'stats.logins': 2, 'stats.fresh': -3 } });
      expect((await accounts.findOne({ _id: 'a' }))!.stats).toEqual({ logins: 3, fresh: -3 });
    });

    it('upserts with $setOnInsert only on insert', async () => {
      const first = await accounts.updateOne(
        { _id: 'u1' },
        { $inc: { balance: 7 }, $setOnInsert: { name: 'new', tier: 'free' } },
        { upsert: true },
      );
      expect(first).toEqual({ matchedCount: 0, modifiedCount: 0, upsertedId: 'u1' });
      expect(await accounts.findOne({ _id: 'u1' })).toEqual({
        _id: 'u1',
        name: 'new',
        tier: 'free',
        balance: 7,
      });

      const second = await accounts.updateOne(
        { _id: 'u1' },
        { $inc: { balance: 1 }, $setOnInsert: { name: 'ignored' } },
        { upsert: true },
      );
      expect(second).toEqual({ matchedCount: 1, modifiedCount: 1, upsertedId: null });
      expect(await accounts.findOne({ _id: 'u1' })).toEqual({
        _id: 'u1',
        name: 'new',
        tier: 'free',
        balance: 8,
      });

      const byName = await accounts.findOneAndUpdate(
        { name: 'by-name' },
        { $set: { balance: 1 } },
        { upsert: true, returnDocument: 'after' },
      );
      expect(byName).toMatchObject({ name: 'by-name', balance: 1 });
      expect(typeof byName!._id).toBe('string');
      expect(await accounts.findOne({ _id: byName!._id })).toEqual(byName);
    });

    it('findOneAndUpdate returns the document before or after, or null', async () => {
      await seed();
      const before = await accounts.findOneAndUpdate({ _id: 'a' }, { $inc: { balance: -1 } });
      expect(before!.balance).toBe(10);
      const after = await accounts.findOneAndUpdate(
        { _id: 'a' },
        { $inc: { balance: -1 } },
        { returnDocument: 'after' },
      );
      expect(after!.balance).toBe(8);
      expect(
        await accounts.findOneAndUpdate({ _id: 'b', balance: { $gte: 1 } }, { $inc: { balance: -1 } }),
      ).toBeNull();
      expect((await accounts.findOne({ _id: 'b' }))!.balance).toBe(0);
    });

    it('deletes many', async () => {
      await seed();
      expect(await accounts.deleteMany({ 'profile.country': 'GB' })).toEqual({ deletedCount: 2 });
      expect(ids(await accounts.find({}, { sort: { _id: 1 } }))).toEqual(['b', 'd']);
      expect(await accounts.deleteMany({ name: 'nobody' })).toEqual({ deletedCount: 0 });
    });

    it('enforces unique indexes with DuplicateKeyError, idempotently created', async () => {
      const keys = store.collection<{ _id: string; hash: string; owner: string }>(
        `keys_${randomUUID().slice(0, 8)}`,
      );
      await keys.createIndex({ hash: 1 }, { unique: true, name: 'hash_unique' });
      await keys.createIndex({ hash: 1 }, { unique: true, name: 'hash_unique' });
      await keys.createIndex({ owner: 1 });
      await keys.insertOne({ _id: 'k1', hash: 'h1', owner: 'o' });
      await keys.insertOne({ _id: 'k2', hash: 'h2', owner: 'o' });
      await expect(keys.insertOne({ _id: 'k3', hash: 'h1', owner: 'p' })).rejects.toBeInstanceOf(
        DuplicateKeyError,
      );
      await expect(keys.updateOne({ _id: 'k2' }, { $set: { hash: 'h1' } })).rejects.toBeInstanceOf(
        DuplicateKeyError,
      );
      await expect(
        keys.updateOne({ _id: 'k9' }, { $setOnInsert: { hash: 'h2', owner: 'q' } }, { upsert: true }),
      ).rejects.toBeInstanceOf(DuplicateKeyError);
      expect(await keys.countDocuments({})).toBe(2);
      expect((await keys.findOne({ _id: 'k2' }))!.hash).toBe('h2');
    });

    it('findOneAndUpdate with a condition is atomic under concurrency', async () => {
      await accounts.insertOne({ _id: 'wallet', name: 'w', balance: 10 });
      const results = await Promise.all(
        Array.from({ length: 50 }, () =>
          accounts.findOneAndUpdate({ _id: 'wallet', balance: { $gte: 1 } }, { $inc: { balance: -1 } }),
        ),
      );
      expect(results.filter((r) => r !== null)).toHaveLength(10);
      const seen = results.flatMap((r) => (r ? [r.balance] : [])).sort((x, y) => x - y);
      expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect((await accounts.findOne({ _id: 'wallet' }))!.balance).toBe(0);
    });
  });
}
