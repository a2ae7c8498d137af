/**
 * Document store port: the subset of MongoDB that both MongoDB and FerretDB 1.x serve.
 * Adapters: MongoDB (mongo.ts) and in-memory (in-memory.ts).
 *
 * Deliberately absent (FerretDB 1.x lacks them or they are not portable): multi-document
 * transactions, change streams, aggregation pipelines. Atomicity comes from single-document
 * conditional updates (`findOneAndUpdate` with a filter such as `{ balance: { $gte: n } }`).
 *
 * Filters: equality on a field (dotted paths allowed), and operators $eq, $ne, $gt, $gte, $lt,
 * $lte, $in, $nin, $exists. Updates: $set, $unset, $inc, $setOnInsert (dotted paths allowed).
 */
export type Doc = { _id: string } & Record<string, unknown>;

export type Comparable = string | number | boolean | Date | null;
export interface FieldOperators {
  $eq?: Comparable;
  $ne?: Comparable;
  $gt?: Comparable;
  $gte?: Comparable;
  $lt?: Comparable;
  $lte?: Comparable;
  $in?: readonly Comparable[];
  $nin?: readonly Comparable[];
  $exists?: boolean;
}
export type Filter = Record<string, Comparable | FieldOperators>;

export interface Update {
  $set?: Record<string, unknown>;
  $unset?: Record<string, ''>;
  $inc?: Record<string, number>;
  $setOnInsert?: Record<string, unknown>;
}

export interface FindOptions {
  sort?: Record<string, 1 | -1>;
  limit?: number;
  skip?: number;
}

export interface UpdateResult {
  matchedCount: number;
  modifiedCount: number;
  upsertedId: string | null;
}

export interface Collection<T extends Doc> {
  /** Throws DuplicateKeyError on a duplicate `_id` or unique-index value. */
  insertOne(doc: T): Promise<void>;
  findOne(filter: Filter): Promise<T | null>;
  find(filter: Filter, options?: FindOptions): Promise<T[]>;
  countDocuments(filter: Filter): Promise<number>;
  updateOne(filter: Filter, update: Update, options?: { upsert?: boolean }): Promise<UpdateResult>;
  /** Atomic read-modify-write of one document; null when nothing matched (and no upsert). */
  findOneAndUpdate(
    filter: Filter,
    update: Update,
    options?: { upsert?: boolean; returnDocument?: 'before' | 'after' },
  ): Promise<T | null>;
  deleteOne(filter: Filter): Promise<{ deletedCount: number }>;
  deleteMany(filter: Filter): Promise<{ deletedCount: number }>;
  /** Idempotent. */
  createIndex(keys: Record<string, 1 | -1>, options?: { unique?: boolean; name?: string }): Promise<void>;
}

export interface DocumentStore {
  collection<T extends Doc>(name: string): Collection<T>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export class DuplicateKeyError extends Error {
  constructor(message = 'duplicate key', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DuplicateKeyError';
  }
}
