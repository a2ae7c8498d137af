import { randomUUID } from 'node:crypto';
import {
  DuplicateKeyError,
  type Collection,
  type Doc,
  type DocumentStore,
  type FieldOperators,
  type Filter,
  type FindOptions,
  type Update,
  type UpdateResult,
} from './port.ts';

interface Index {
  name: string;
  keys: Record<string, 1 | -1>;
  unique: boolean;
}

interface CollectionState {
  docs: Map<string, Doc>;
  indexes: Map<string, Index>;
}

/**
 * DocumentStore in process memory with MongoDB's semantics for the operators the port allows.
 * Documents are deep-copied in and out, so callers never share state with the store. Every
 * operation runs to completion without awaiting in between, which makes each one atomic.
 */
export function createInMemoryDocumentStore(): DocumentStore {
  const collections = new Map<string, CollectionState>();
  let closed = false;

  const stateOf = (name: string): CollectionState => {
    if (closed) throw new Error('document store is closed');
    let state = collections.get(name);
    if (!state) {
      state = { docs: new Map(), indexes: new Map() };
      collections.set(name, state);
    }
    return state;
  };

  return {
    collection<T extends Doc>(name: string): Collection<T> {
      return createCollection<T>(() => stateOf(name));
    },
    async ping() {
      if (closed) throw new Error('document store is closed');
    },
    async close() {
      closed = true;
    },
  };
}

function createCollection<T extends Doc>(state: () => CollectionState): Collection<T> {
  const out = (doc: Doc): T => structuredClone(doc) as T;

  const matching = (filter: Filter): Doc[] => [...state().docs.values()].filter((d) => matches(d, filter));

  /** Throws when `candidate` would collide with another document on `_id` or a unique index. */
  const checkUnique = (s: CollectionState, candidate: Doc, replacing: string | null): void => {
    if (candidate._id !== replacing && s.docs.has(candidate._id)) {
      throw new DuplicateKeyError(`duplicate key: _id ${JSON.stringify(candidate._id)}`);
    }
    for (const index of s.indexes.values()) {
      if (!index.unique) continue;
      const key = indexKey(candidate, index);
      for (const other of s.docs.values()) {
        if (other._id === replacing || other._id === candidate._id) continue;
        if (indexKey(other, index) === key) {
          throw new DuplicateKeyError(`duplicate key: index ${index.name} ${key}`);
        }
      }
    }
  };

  /** Applies `update` to the first match (or upserts); returns before/after images. */
  const modifyOne = (
    filter: Filter,
    update: Update,
    upsert: boolean,
  ): { before: Doc | null; after: Doc | null; upsertedId: string | null } => {
    const s = state();
    const current = [...s.docs.values()].find((d) => matches(d, filter)) ?? null;
    if (current) {
      const next = applyUpdate(structuredClone(current), update, false) as Doc;
      if (next._id !== current._id) throw new Error('the _id field cannot be changed');
      checkUnique(s, next, current._id);
      s.docs.set(next._id, next);
      return { before: current, after: next, upsertedId: null };
    }
    if (!upsert) return { before: null, after: null, upsertedId: null };
    const seed: Record<string, unknown> = {};
    for (const [path, condition] of Object.entries(filter)) {
      if (isOperatorObject(condition)) {
        if ('$eq' in condition) setPath(seed, path, structuredClone(condition.$eq));
      } else {
        setPath(seed, path, structuredClone(condition));
      }
    }
    const created = applyUpdate(seed, update, true);
    if (typeof created._id !== 'string') created._id = randomUUID();
    const doc = created as Doc;
    checkUnique(s, doc, null);
    s.docs.set(doc._id, doc);
    return { before: null, after: doc, upsertedId: doc._id };
  };

  return {
    async insertOne(doc) {
      const s = state();
      if (typeof doc._id !== 'string') throw new TypeError('documents need a string _id');
      const copy = structuredClone(doc) as Doc;
      checkUnique(s, copy, null);
      s.docs.set(copy._id, copy);
    },
    async findOne(filter) {
      const found = [...state().docs.values()].find((d) => matches(d, filter));
      return found ? out(found) : null;
    },
    async find(filter, options: FindOptions = {}) {
      let docs = matching(filter);
      if (options.sort) docs = sortDocs(docs, options.sort);
      const skip = options.skip ?? 0;
      docs = docs.slice(skip, options.limit ? skip + options.limit : undefined);
      return docs.map(out);
    },
    async countDocuments(filter) {
      return matching(filter).length;
    },
    async updateOne(filter, update, options = {}): Promise<UpdateResult> {
      const { before, after, upsertedId } = modifyOne(filter, update, options.upsert ?? false);
      if (upsertedId !== null) return { matchedCount: 0, modifiedCount: 0, upsertedId };
      return {
        matchedCount: before ? 1 : 0,
        modifiedCount: before && !deepEqual(before, after) ? 1 : 0,
        upsertedId: null,
      };
    },
    async findOneAndUpdate(filter, update, options = {}) {
      const { before, after } = modifyOne(filter, update, options.upsert ?? false);
      const chosen = (options.returnDocument ?? 'before') === 'after' ? after : before;
      return chosen ? out(chosen) : null;
    },
    async deleteOne(filter) {
      const s = state();
      const found = [...s.docs.values()].find((d) => matches(d, filter));
      if (!found) return { deletedCount: 0 };
      s.docs.delete(found._id);
      return { deletedCount: 1 };
    },
    async deleteMany(filter) {
      const s = state();
      const found = matching(filter);
      for (const d of found) s.docs.delete(d._id);
      return { deletedCount: found.length };
    },
    async createIndex(keys, options = {}) {
      const s = state();
      const name =
        options.name ??
        Object.entries(keys)
          .map(([k, dir]) => `${k}_${dir}`)
          .join('_');
      const existing = s.indexes.get(name);
      if (existing) {
        if (!deepEqual(existing.keys, keys) || existing.unique !== (options.unique ?? false)) {
          throw new Error(`index ${name} already exists with different options`);
        }
        return;
      }
      const index: Index = { name, keys: { ...keys }, unique: options.unique ?? false };
      if (index.unique) {
        const seen = new Set<string>();
        for (const d of s.docs.values()) {
          const key = indexKey(d, index);
          if (seen.has(key)) throw new DuplicateKeyError(`duplicate key: index ${name} ${key}`);
          seen.add(key);
        }
      }
      s.indexes.set(name, index);
    },
  };
}

// ---------------------------------------------------------------------------------- matching

const MISSING = Symbol('missing');

function getPath(doc: unknown, path: string): unknown {
  let current: unknown = doc;
  for (const part of path.split('.')) {
    if (current === null || typeof current !== 'object' || current instanceof Date) return MISSING;
    if (!Object.hasOwn(current, part)) return MISSING;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

function setPath(doc: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let current = doc;
  for (const part of parts.slice(0, -1)) {
    const next = current[part];
    if (next === undefined || next === null) {
      current[part] = {};
    } else if (typeof next !== 'object' || Array.isArray(next) || next instanceof Date) {
      throw new Error(`cannot create field in element {${part}: ${JSON.stringify(next)}}`);
    }
    current = current[part] as Record<string, unknown>;
  }
  current[parts[parts.length - 1]!] = value;
}

function unsetPath(doc: Record<string, unknown>, path: string): void {
  const parts = path.split('.');
  const parent = getPath(doc, parts.slice(0, -1).join('.'));
  const target = parts.length === 1 ? doc : parent;
  if (target !== MISSING && target !== null && typeof target === 'object') {
    delete (target as Record<string, unknown>)[parts[parts.length - 1]!];
  }
}

function isOperatorObject(value: unknown): value is FieldOperators {
  if (value === null || typeof value !== 'object' || value instanceof Date || Array.isArray(value))
    return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((k) => k.startsWith('$'));
}

function matches(doc: Doc, filter: Filter): boolean {
  return Object.entries(filter).every(([path, condition]) => {
    const value = getPath(doc, path);
    if (!isOperatorObject(condition)) return equalsWithArrays(value, condition);
    return Object.entries(condition).every(([op, operand]) => matchOperator(value, op, operand));
  });
}

function matchOperator(value: unknown, op: string, operand: unknown): boolean {
  switch (op) {
    case '$eq':
      return equalsWithArrays(value, operand);
    case '$ne':
      return !equalsWithArrays(value, operand);
    case '$in':
      return (operand as unknown[]).some((o) => equalsWithArrays(value, o));
    case '$nin':
      return !(operand as unknown[]).some((o) => equalsWithArrays(value, o));
    case '$exists':
      return (value !== MISSING) === operand;
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      return anyElement(value, (v) => {
        const c = compareSameType(v, operand);
        if (c === null) return false;
        return op === '$gt' ? c > 0 : op === '$gte' ? c >= 0 : op === '$lt' ? c < 0 : c <= 0;
      });
    default:
      throw new Error(`unsupported filter operator ${op}`);
  }
}

/** MongoDB: a condition on an array field holds when it holds for the array or any element. */
function anyElement(value: unknown, test: (v: unknown) => boolean): boolean {
  return test(value) || (Array.isArray(value) && value.some(test));
}

/** MongoDB equality: `null` also matches a missing field. */
function equalsWithArrays(value: unknown, operand: unknown): boolean {
  if (operand === null && value === MISSING) return true;
  if (value === MISSING) return false;
  return anyElement(value, (v) => deepEqual(v, operand));
}

/** Ordering only within one type (MongoDB's type bracketing); null when not comparable. */
function compareSameType(a: unknown, b: unknown): number | null {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (a instanceof Date && b instanceof Date) return a.getTime() - b.getTime();
  if (a === null && b === null) return 0;
  return null;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a instanceof Date || b instanceof Date) {
    return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]))
    );
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return (
      ka.length === kb.length &&
      ka.every(
        (k) =>
          Object.hasOwn(b, k) &&
          deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
      )
    );
  }
  return false;
}

// ----------------------------------------------------------------------------------- updates

function applyUpdate(
  doc: Record<string, unknown>,
  update: Update,
  inserting: boolean,
): Record<string, unknown> {
  for (const op of Object.keys(update)) {
    if (!['$set', '$unset', '$inc', '$setOnInsert'].includes(op))
      throw new Error(`unsupported update operator ${op}`);
  }
  for (const [path, value] of Object.entries(update.$set ?? {})) setPath(doc, path, structuredClone(value));
  if (inserting) {
    for (const [path, value] of Object.entries(update.$setOnInsert ?? {}))
      setPath(doc, path, structuredClone(value));
  }
  for (const [path, by] of Object.entries(update.$inc ?? {})) {
    const current = getPath(doc, path);
    if (current === MISSING) {
      setPath(doc, path, by);
    } else if (typeof current === 'number') {
      setPath(doc, path, current + by);
    } else {
      throw new Error(`cannot apply $inc to a non-numeric field ${path}`);
    }
  }
  for (const path of Object.keys(update.$unset ?? {})) unsetPath(doc, path);
  return doc;
}

// ------------------------------------------------------------------------------ sort, indexes

/** MongoDB's cross-type sort order for the types the port stores. */
function typeRank(v: unknown): number {
  if (v === MISSING || v === null || v === undefined) return 0;
  if (typeof v === 'number') return 1;
  if (typeof v === 'string') return 2;
  if (Array.isArray(v)) return 4;
  if (v instanceof Date) return 7;
  if (typeof v === 'boolean') return 6;
  return 3;
}

function compareForSort(a: unknown, b: unknown): number {
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra - rb;
  return compareSameType(a, b) ?? 0;
}

function sortDocs(docs: Doc[], sort: Record<string, 1 | -1>): Doc[] {
  const keys = Object.entries(sort);
  return [...docs].sort((x, y) => {
    for (const [path, dir] of keys) {
      const c = compareForSort(getPath(x, path), getPath(y, path));
      if (c !== 0) return c * dir;
    }
    return 0;
  });
}

/** Canonical text of a document's values for an index (missing counts as null, like MongoDB). */
function indexKey(doc: Doc, index: Index): string {
  return JSON.stringify(
    Object.keys(index.keys).map((path) => {
      const v = getPath(doc, path);
      if (v === MISSING || v === undefined) return null;
      if (v instanceof Date) return { $date: v.getTime() };
      return v;
    }),
  );
}
