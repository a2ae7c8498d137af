import { randomUUID } from 'node:crypto';
import {
  MongoClient,
  MongoServerError,
  type Collection as MongoCollection,
  type Db,
  type Document,
} from 'mongodb';
import {
  DuplicateKeyError,
  type Collection,
  type Doc,
  type DocumentStore,
  type Filter,
  type Update,
} from './port.ts';

export interface MongoDocumentStoreOptions {
  url: string;
  dbName: string;
  /** How long an operation waits for a reachable server. Default 5 000 ms. */
  serverSelectionTimeoutMs?: number;
  /**
   * FerretDB 1.x runs an update as read, modify in its own process, write back by `_id`, with no
   * isolation, so two concurrent conditional updates can both apply. 'auto' (default) detects
   * FerretDB (buildInfo.ferretdbVersion) and then serializes updates and deletes per collection
   * with a lease lock document; 'always' and 'never' force the choice.
   */
  serializeWrites?: 'auto' | 'always' | 'never';
  /** Lease of a write lock whose holder died. Default 10 000 ms. */
  writeLockLeaseMs?: number;
  /** Bound on one operation's wait for the server's answer. Default 30 000 ms. */
  socketTimeoutMs?: number;
  /** Bound on opening one connection. Default 10 000 ms. */
  connectTimeoutMs?: number;
}

export interface MongoDocumentStore extends DocumentStore {
  /** Drops the whole database: for tests that create one per test. */
  dropDatabase(): Promise<void>;
}

/**
 * DocumentStore on MongoDB or FerretDB 1.x with the official driver. Only single-document
 * operations are used (no transactions, change streams or aggregation), so both servers behave
 * the same. `_id`s are strings; an upsert without an `_id` in its filter gets a random UUID rather
 * than a server-made ObjectId.
 */
export function createMongoDocumentStore(options: MongoDocumentStoreOptions): MongoDocumentStore {
  const client = new MongoClient(options.url, {
    serverSelectionTimeoutMS: options.serverSelectionTimeoutMs ?? 5_000,
    // A server that accepted a request and went silent must not hold the caller (an outbox relay
    // pass, a usage flush) forever: the driver's default is no socket timeout at all.
    socketTimeoutMS: options.socketTimeoutMs ?? 30_000,
    // Likewise a new connection to it (the driver's default: 30 s).
    connectTimeoutMS: options.connectTimeoutMs ?? 10_000,
    // Atomicity rests on single-document updates, which are not safe to replay blindly.
    retryWrites: false,
  });
  const db = client.db(options.dbName);
  const serialize = createWriteSerializer(db, options);

  return {
    collection<T extends Doc>(name: string): Collection<T> {
      return createCollection<T>(db.collection(name), (op) => serialize(name, op));
    },
    async ping() {
      await db.command({ ping: 1 });
    },
    async dropDatabase() {
      await db.dropDatabase();
    },
    async close() {
      await client.close();
    },
  };
}

type Serialize = <R>(operation: () => Promise<R>) => Promise<R>;

function createCollection<T extends Doc>(
  collection: MongoCollection<Document>,
  serialize: Serialize,
): Collection<T> {
  const out = (doc: Document | null): T | null => (doc ? ({ ...doc, _id: String(doc._id) } as T) : null);

  /** Upserts get a string `_id` unless the filter pins one. */
  const withUpsertId = (filter: Filter, update: Update, upsert: boolean): Update => {
    if (
      !upsert ||
      '_id' in filter ||
      update.$set?._id !== undefined ||
      update.$setOnInsert?._id !== undefined
    ) {
      return update;
    }
    return { ...update, $setOnInsert: { ...update.$setOnInsert, _id: randomUUID() } };
  };

  return {
    async insertOne(doc) {
      // The driver adds fields to the object it is given; keep the caller's object untouched.
      await mapDuplicate(() => collection.insertOne({ ...doc } as Document));
    },
    async findOne(filter) {
      return out(await collection.findOne(filter as Document));
    },
    async find(filter, options = {}) {
      let cursor = collection.find(filter as Document);
      if (options.sort) cursor = cursor.sort(options.sort);
      if (options.skip) cursor = cursor.skip(options.skip);
      if (options.limit) cursor = cursor.limit(options.limit);
      const docs = await cursor.toArray();
      return docs.map((d) => out(d)!);
    },
    async countDocuments(filter) {
      return collection.countDocuments(filter as Document);
    },
    async updateOne(filter, update, options = {}) {
      const upsert = options.upsert ?? false;
      const result = await serialize(() =>
        mapDuplicate(() =>
          collection.updateOne(filter as Document, withUpsertId(filter, update, upsert) as Document, {
            upsert,
          }),
        ),
      );
      return {
        matchedCount: result.matchedCount,
        modifiedCount: result.modifiedCount,
        upsertedId:
          result.upsertedId === null || result.upsertedId === undefined ? null : String(result.upsertedId),
      };
    },
    async findOneAndUpdate(filter, update, options = {}) {
      const upsert = options.upsert ?? false;
      const doc = await serialize(() =>
        mapDuplicate(() =>
          collection.findOneAndUpdate(filter as Document, withUpsertId(filter, update, upsert) as Document, {
            upsert,
            returnDocument: options.returnDocument ?? 'before',
          }),
        ),
      );
      return out(doc);
    },
    async deleteOne(filter) {
      const result = await serialize(() => collection.deleteOne(filter as Document));
      return { deletedCount: result.deletedCount };
    },
    async deleteMany(filter) {
      const result = await serialize(() => collection.deleteMany(filter as Document));
      return { deletedCount: result.deletedCount };
    },
    async createIndex(keys, options = {}) {
      await mapDuplicate(() =>
        collection.createIndex(keys, {
          unique: options.unique ?? false,
          ...(options.name ? { name: options.name } : {}),
        }),
      );
    },
  };
}

/**
 * MongoDB reports every unique violation as E11000. FerretDB 1.x does so for inserts, but a
 * violation caused by an update surfaces as InternalError (code 1) carrying SQLite's message.
 */
function isDuplicateKey(error: unknown): error is MongoServerError {
  return (
    error instanceof MongoServerError &&
    (error.code === 11000 || (error.code === 1 && error.message.includes('UNIQUE constraint failed')))
  );
}

async function mapDuplicate<R>(operation: () => Promise<R>): Promise<R> {
  try {
    return await operation();
  } catch (error) {
    if (isDuplicateKey(error)) throw new DuplicateKeyError(error.message, { cause: error });
    throw error;
  }
}

interface LockDoc {
  _id: string;
  owner: string;
  expiresAt: Date;
}

const LOCK_COLLECTION = '_subx_write_locks';

/**
 * Runs updates and deletes of one collection one at a time across every process sharing the
 * database, when the server needs it (FerretDB). Inserting a document with a fixed `_id` is atomic
 * on every server, so the lock is a document in LOCK_COLLECTION; within a process a promise
 * chain queues contenders first, so only one per process polls the lock.
 */
function createWriteSerializer(
  db: Db,
  options: MongoDocumentStoreOptions,
): <R>(collection: string, operation: () => Promise<R>) => Promise<R> {
  const mode = options.serializeWrites ?? 'auto';
  const leaseMs = options.writeLockLeaseMs ?? 10_000;
  const locks = db.collection<LockDoc>(LOCK_COLLECTION);
  const queues = new Map<string, Promise<unknown>>();
  let needed: Promise<boolean> | null =
    mode === 'always' ? Promise.resolve(true) : mode === 'never' ? Promise.resolve(false) : null;

  const detect = (): Promise<boolean> =>
    (needed ??= db
      .admin()
      .command({ buildInfo: 1 })
      .then((info) => typeof info.ferretdbVersion === 'string')
      .catch((error: unknown) => {
        needed = null;
        throw error;
      }));

  const acquire = async (name: string): Promise<() => Promise<void>> => {
    const owner = randomUUID();
    const deadline = Date.now() + leaseMs * 3;
    for (let attempt = 0; ; attempt++) {
      try {
        await locks.insertOne({ _id: name, owner, expiresAt: new Date(Date.now() + leaseMs) });
        return async () => {
          await locks.deleteOne({ _id: name, owner }).catch(() => undefined);
        };
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
      const held = await locks.findOne({ _id: name });
      if (held && held.expiresAt.getTime() < Date.now()) {
        // Its holder died: break the lease (only that holder's lock, by owner).
        await locks.deleteOne({ _id: name, owner: held.owner });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for the write lock of ${name}`);
      await new Promise((resolve) => setTimeout(resolve, Math.min(20, 1 + attempt) * (0.5 + Math.random())));
    }
  };

  return async (name, operation) => {
    if (!(await detect())) return operation();
    const previous = queues.get(name) ?? Promise.resolve();
    const run = previous.then(async () => {
      const release = await acquire(name);
      try {
        return await operation();
      } finally {
        await release();
      }
    });
    const tail = run.catch(() => undefined);
    queues.set(name, tail);
    void tail.then(() => {
      if (queues.get(name) === tail) queues.delete(name);
    });
    return run;
  };
}
