/**
 * `scripts/backup.sh <dir>` and `scripts/restore.sh <dir> [--force]` (docs/operations.md, "Backup"
 * and "Restore"): the durable state of the gateway and billing, written to and read back from a
 * directory.
 *
 * - MongoDB: every collection of each database (MONGO_URL + MONGO_DB, default `subx`; billing's own
 *   BILLING_MONGO_URL + BILLING_MONGO_DB when it lives elsewhere), one NDJSON file per collection in
 *   canonical Extended JSON so ObjectId, Date, Long and Binary survive, streamed in batches.
 * - Redis (REDIS_URL): the keys that are state, not cache (REDIS_STATE_PATTERNS), as DUMP payloads
 *   with their absolute expiry, so a restore neither resets a daily counter nor revives an expired one.
 * - manifest.json: the time, each file's collection, document count, sha256 and index definitions.
 *
 * Restore checks every hash before it writes anything, refuses a target that already holds data
 * unless --force (which drops the databases and the matching Redis keys first), and recreates the
 * saved indexes; the services also create theirs on start. Connection URLs are never printed.
 *
 * A backup holds password hashes, key hashes, e-mail addresses and sealed webhook secrets: the
 * directory is made 0700 and every file 0600, whatever the umask. With BACKUP_AGE_RECIPIENTS (age
 * public keys, comma-separated) or BACKUP_PASSPHRASE each data file is also encrypted with age
 * (age-encryption.org/v1, `<file>.age`), streamed; the manifest stays readable (names, counts,
 * hashes of the encrypted files, no data), so a damaged file is found without the key. Restore
 * decrypts with BACKUP_AGE_IDENTITY (an `AGE-SECRET-KEY-1…` line, or BACKUP_AGE_IDENTITY_FILE) or
 * the same BACKUP_PASSPHRASE.
 */
import { createHash } from 'node:crypto';
import {
  chmodSync,
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
} from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable, Transform } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { pipeline } from 'node:stream/promises';
import type * as AgeModule from 'age-encryption';
import { Redis } from 'ioredis';
import { BSON, MongoClient, type Document } from 'mongodb';

const { EJSON } = BSON;

const FORMAT = 'subx-backup/v1';
const BATCH = 1_000;
/** Only the owner reads a backup: it holds password and key hashes and e-mail addresses. */
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

/**
 * State, not cache: daily request counters (rl:day), credit usage counters (usage:), idempotency
 * records (idem:, a retried request must not be charged twice) and the dashboard's sessions,
 * one-time links and sign-in lockouts. Left out: per-minute windows (rl:ip, rl:reads), response and
 * key caches, which rebuild themselves.
 */
const REDIS_STATE_PATTERNS = [
  'rl:day:*',
  'usage:*',
  'idem:*',
  'dashboard:session:*',
  'dashboard:link*',
  'dashboard:signin:*',
];

interface CollectionEntry {
  db: string;
  collection: string;
  file: string;
  count: number;
  sha256: string;
  indexes: Document[];
}

/** How the data files are encrypted: age to public keys, or age with a passphrase (scrypt). */
type Encryption = { kind: 'age'; to: 'recipients' | 'passphrase' };

interface Manifest {
  format: typeof FORMAT;
  createdAt: string;
  /** Absent: plain NDJSON. Set: every data file is age-encrypted, and its sha256 is of the ciphertext. */
  encryption?: Encryption;
  mongo: { source: 'gateway' | 'billing'; db: string }[];
  collections: CollectionEntry[];
  redis: { file: string; count: number; sha256: string; patterns: string[] } | null;
}

interface Target {
  source: 'gateway' | 'billing';
  url: string;
  db: string;
}

class UsageError extends Error {}

/** age-encryption is in the gateway's image and in a checkout, not in every service's image. */
async function loadAge(): Promise<typeof AgeModule> {
  try {
    return await import('age-encryption');
  } catch (cause) {
    throw new UsageError(
      'an encrypted backup needs the age-encryption package: run it in the gateway image or from a checkout',
      { cause },
    );
  }
}

/** Node's stream/web types and the DOM's name the same streams; these two casts join them. */
const toWebInput = (stream: Readable) => Readable.toWeb(stream) as unknown as ReadableStream<Uint8Array>;
const toWebOutput = (stream: ReadableStream<Uint8Array>) =>
  stream as unknown as NodeReadableStream<Uint8Array>;

/** Turns a stream of plaintext into age ciphertext, or back. */
type Transcoder = (input: ReadableStream<Uint8Array>) => Promise<ReadableStream<Uint8Array>>;

/** The backup's encryption from BACKUP_AGE_RECIPIENTS or BACKUP_PASSPHRASE; null: none asked for. */
async function encrypterFrom(
  env: NodeJS.ProcessEnv,
): Promise<{ encryption: Encryption; encrypt: Transcoder } | null> {
  const recipients = (env.BACKUP_AGE_RECIPIENTS ?? '')
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  const passphrase = env.BACKUP_PASSPHRASE ?? '';
  if (recipients.length === 0 && passphrase === '') return null;
  if (recipients.length > 0 && passphrase !== '')
    throw new UsageError('set BACKUP_AGE_RECIPIENTS or BACKUP_PASSPHRASE, not both');
  const age = await loadAge();
  const make = () => {
    const e = new age.Encrypter();
    if (passphrase !== '') e.setPassphrase(passphrase);
    for (const recipient of recipients) {
      if (!recipient.startsWith('age1'))
        throw new UsageError('BACKUP_AGE_RECIPIENTS: each recipient is an age public key (age1…)');
      e.addRecipient(recipient);
    }
    return e;
  };
  make();
  return {
    encryption: { kind: 'age', to: passphrase !== '' ? 'passphrase' : 'recipients' },
    encrypt: (input) => make().encrypt(input),
  };
}

/** The decrypter a restore of an encrypted backup needs, from BACKUP_AGE_IDENTITY(_FILE) or BACKUP_PASSPHRASE. */
async function decrypterFrom(env: NodeJS.ProcessEnv, encryption: Encryption): Promise<Transcoder> {
  const age = await loadAge();
  const d = new age.Decrypter();
  if (encryption.to === 'passphrase') {
    if (!env.BACKUP_PASSPHRASE)
      throw new UsageError('the backup is encrypted with a passphrase: set BACKUP_PASSPHRASE');
    d.addPassphrase(env.BACKUP_PASSPHRASE);
  } else {
    const file = env.BACKUP_AGE_IDENTITY_FILE?.trim();
    const text = file ? readFileSync(file, 'utf8') : (env.BACKUP_AGE_IDENTITY ?? '');
    const identities = text
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line.startsWith('AGE-SECRET-KEY-'));
    if (identities.length === 0)
      throw new UsageError(
        'the backup is encrypted to age recipients: set BACKUP_AGE_IDENTITY or BACKUP_AGE_IDENTITY_FILE (AGE-SECRET-KEY-1…)',
      );
    for (const identity of identities) d.addIdentity(identity);
  }
  return (input) => d.decrypt(input);
}

/** Credentials never reach the terminal, even inside a driver's error message. */
const redact = (text: string) => text.replace(/\/\/[^@/\s]*@/g, '//***@');

function mongoTargets(env: NodeJS.ProcessEnv): Target[] {
  const url = env.MONGO_URL?.trim();
  if (!url) throw new UsageError("MONGO_URL is not set (the gateway's MongoDB URL)");
  const targets: Target[] = [{ source: 'gateway', url, db: env.MONGO_DB?.trim() || 'subx' }];
  const billingUrl = env.BILLING_MONGO_URL?.trim() || url;
  const billingDb = env.BILLING_MONGO_DB?.trim() || targets[0]!.db;
  if (billingUrl !== url || billingDb !== targets[0]!.db)
    targets.push({ source: 'billing', url: billingUrl, db: billingDb });
  return targets;
}

async function withClient<T>(url: string, run: (client: MongoClient) => Promise<T>): Promise<T> {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 10_000 });
  try {
    await client.connect();
    return await run(client);
  } finally {
    await client.close();
  }
}

/**
 * Writes lines with backpressure (0600, a new file), through `encrypt` when given, and hashes
 * exactly the bytes stored.
 */
async function writeLines(
  path: string,
  lines: AsyncIterable<string>,
  encrypt?: Transcoder,
): Promise<{ count: number; sha256: string }> {
  const hash = createHash('sha256');
  let count = 0;
  async function* bytes() {
    for await (const line of lines) {
      count++;
      yield Buffer.from(`${line}\n`, 'utf8');
    }
  }
  const plain = Readable.from(bytes());
  const stored = encrypt ? Readable.fromWeb(toWebOutput(await encrypt(toWebInput(plain)))) : plain;
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  await pipeline(stored, hashing, createWriteStream(path, { flags: 'wx', mode: FILE_MODE }));
  chmodSync(path, FILE_MODE);
  return { count, sha256: hash.digest('hex') };
}

async function fileSha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function* readLines(path: string, decrypt?: Transcoder): AsyncIterable<string> {
  const file = createReadStream(path);
  const input = decrypt ? Readable.fromWeb(toWebOutput(await decrypt(toWebInput(file)))) : file;
  const lines = createInterface({ input, crlfDelay: Infinity });
  for await (const line of lines) if (line.length > 0) yield line;
}

const safeName = (name: string) => encodeURIComponent(name);

async function backup(dir: string, env: NodeJS.ProcessEnv): Promise<Manifest> {
  if (existsSync(dir) && readdirSync(dir).length > 0)
    throw new UsageError(`${dir} is not empty: back up into a new directory`);
  const sealing = await encrypterFrom(env);
  const suffix = sealing ? '.age' : '';
  // Nothing the backup makes is readable by anyone else, whatever the caller's umask.
  process.umask(0o077);
  mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  chmodSync(dir, DIR_MODE);
  const targets = mongoTargets(env);
  const collections: CollectionEntry[] = [];
  for (const target of targets) {
    await withClient(target.url, async (client) => {
      const db = client.db(target.db);
      const names = (await db.listCollections({}, { nameOnly: true }).toArray())
        .map((c) => c.name)
        .filter((name) => !name.startsWith('system.'))
        .sort();
      for (const name of names) {
        const file = join('mongo', safeName(target.db), `${safeName(name)}.ndjson${suffix}`);
        mkdirSync(dirname(join(dir, file)), { recursive: true, mode: DIR_MODE });
        chmodSync(dirname(join(dir, file)), DIR_MODE);
        const cursor = db.collection(name).find({}, { batchSize: BATCH, sort: { _id: 1 } });
        async function* docs() {
          for await (const doc of cursor) yield EJSON.stringify(doc, { relaxed: false });
        }
        const written = await writeLines(join(dir, file), docs(), sealing?.encrypt);
        const indexes = (await db.collection(name).listIndexes().toArray()).filter(
          (index) => index.name !== '_id_',
        );
        collections.push({ db: target.db, collection: name, file, ...written, indexes });
        console.log(`mongo ${target.db}.${name}: ${written.count} documents`);
      }
    });
  }
  let redis: Manifest['redis'] = null;
  const redisUrl = env.REDIS_URL?.trim();
  if (redisUrl) {
    const client = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 2 });
    try {
      await client.connect();
      const file = `redis.ndjson${suffix}`;
      const written = await writeLines(join(dir, file), redisEntries(client), sealing?.encrypt);
      redis = { file, ...written, patterns: REDIS_STATE_PATTERNS };
      console.log(`redis: ${written.count} keys`);
    } finally {
      client.disconnect();
    }
  } else {
    console.log('redis: REDIS_URL is not set, skipped');
  }
  const manifest: Manifest = {
    format: FORMAT,
    createdAt: new Date().toISOString(),
    ...(sealing ? { encryption: sealing.encryption } : {}),
    mongo: targets.map(({ source, db }) => ({ source, db })),
    collections,
    redis,
  };
  await writeFile(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`, {
    flag: 'wx',
    mode: FILE_MODE,
  });
  return manifest;
}

async function* scanKeys(client: Redis): AsyncIterable<string[]> {
  for (const pattern of REDIS_STATE_PATTERNS) {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', BATCH);
      cursor = next;
      if (keys.length > 0) yield keys;
    } while (cursor !== '0');
  }
}

async function* redisEntries(client: Redis): AsyncIterable<string> {
  const seen = new Set<string>();
  for await (const keys of scanKeys(client)) {
    const fresh = keys.filter((key) => !seen.has(key));
    fresh.forEach((key) => seen.add(key));
    const pipeline = client.pipeline();
    for (const key of fresh) pipeline.dumpBuffer(key).pttl(key);
    const replies = (await pipeline.exec()) ?? [];
    const now = Date.now();
    for (const [i, key] of fresh.entries()) {
      const [dumpError, dump] = replies[2 * i] ?? [];
      const [ttlError, pttl] = replies[2 * i + 1] ?? [];
      if (dumpError || ttlError) throw dumpError ?? ttlError;
      // Gone between SCAN and DUMP: nothing to save.
      if (!(dump instanceof Buffer)) continue;
      const ttl = Number(pttl);
      yield JSON.stringify({ key, expireAt: ttl > 0 ? now + ttl : null, dump: dump.toString('base64') });
    }
  }
}

function readManifest(dir: string): Manifest {
  const path = join(dir, 'manifest.json');
  if (!existsSync(path)) throw new UsageError(`${path} does not exist: not a backup directory`);
  const manifest = JSON.parse(readFileSync(path, 'utf8')) as Manifest;
  if (manifest.format !== FORMAT)
    throw new UsageError(`${path}: unknown format ${String(manifest.format)}, expected ${FORMAT}`);
  return manifest;
}

async function verify(dir: string, manifest: Manifest): Promise<void> {
  const files = [...manifest.collections, ...(manifest.redis ? [manifest.redis] : [])];
  const bad: string[] = [];
  for (const entry of files) {
    const path = join(dir, entry.file);
    if (!existsSync(path)) bad.push(`${entry.file}: missing`);
    else if ((await fileSha256(path)) !== entry.sha256)
      bad.push(`${entry.file}: sha256 does not match the manifest`);
  }
  if (bad.length > 0)
    throw new UsageError(`the backup is damaged or was changed, nothing restored:\n  ${bad.join('\n  ')}`);
}

async function restore(dir: string, force: boolean, env: NodeJS.ProcessEnv): Promise<void> {
  const manifest = readManifest(dir);
  await verify(dir, manifest);
  const decrypt = manifest.encryption ? await decrypterFrom(env, manifest.encryption) : undefined;
  const targets = mongoTargets(env);
  const urlOf = (source: 'gateway' | 'billing') =>
    (targets.find((t) => t.source === source) ?? targets[0]!).url;
  const redisUrl = env.REDIS_URL?.trim();
  if (manifest.redis && manifest.redis.count > 0 && !redisUrl)
    throw new UsageError('the backup holds Redis keys but REDIS_URL is not set');
  const redis =
    manifest.redis && redisUrl ? new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 2 }) : null;
  try {
    await redis?.connect();
    // Refuse before writing anything: a non-empty target is someone's live data.
    const occupied: string[] = [];
    for (const { source, db } of manifest.mongo) {
      await withClient(urlOf(source), async (client) => {
        for (const c of await client.db(db).listCollections({}, { nameOnly: true }).toArray()) {
          if (
            !c.name.startsWith('system.') &&
            (await client.db(db).collection(c.name).countDocuments({}, { limit: 1 })) > 0
          )
            occupied.push(`mongo ${db}.${c.name}`);
        }
      });
    }
    if (redis)
      for await (const keys of scanKeys(redis)) occupied.push(`redis ${keys.length}+ keys like ${keys[0]}`);
    if (occupied.length > 0 && !force)
      throw new UsageError(
        `the target is not empty (--force replaces it):\n  ${occupied.slice(0, 10).join('\n  ')}`,
      );
    for (const { source, db } of manifest.mongo) {
      await withClient(urlOf(source), async (client) => {
        if (force) await client.db(db).dropDatabase();
        for (const entry of manifest.collections.filter((c) => c.db === db)) {
          const collection = client.db(db).collection(entry.collection);
          await client
            .db(db)
            .createCollection(entry.collection)
            .catch((error: unknown) => {
              if ((error as { codeName?: string }).codeName !== 'NamespaceExists') throw error;
            });
          let batch: Document[] = [];
          let count = 0;
          for await (const line of readLines(join(dir, entry.file), decrypt)) {
            batch.push(EJSON.parse(line, { relaxed: false }) as Document);
            if (batch.length >= BATCH) {
              count += (await collection.insertMany(batch, { ordered: true })).insertedCount;
              batch = [];
            }
          }
          if (batch.length > 0)
            count += (await collection.insertMany(batch, { ordered: true })).insertedCount;
          if (count !== entry.count)
            throw new Error(
              `${db}.${entry.collection}: restored ${count} documents, the manifest says ${entry.count}`,
            );
          if (entry.indexes.length > 0)
            await collection.createIndexes(
              entry.indexes.map(({ v: _v, ns: _ns, key, ...options }) => ({ key, ...options })),
            );
          console.log(`mongo ${db}.${entry.collection}: ${count} documents, ${entry.indexes.length} indexes`);
        }
      });
    }
    if (redis && manifest.redis) {
      if (force) for await (const keys of scanKeys(redis)) await redis.del(...keys);
      let restored = 0;
      let expired = 0;
      for await (const line of readLines(join(dir, manifest.redis.file), decrypt)) {
        const { key, expireAt, dump } = JSON.parse(line) as {
          key: string;
          expireAt: number | null;
          dump: string;
        };
        const ttl = expireAt === null ? 0 : expireAt - Date.now();
        if (expireAt !== null && ttl <= 0) {
          expired++;
          continue;
        }
        await redis.restore(key, ttl, Buffer.from(dump, 'base64'), 'REPLACE');
        restored++;
      }
      console.log(
        `redis: ${restored} keys${expired > 0 ? `, ${expired} expired since the backup and left out` : ''}`,
      );
    }
  } finally {
    redis?.disconnect();
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const force = rest.includes('--force');
  const args = rest.filter((a) => a !== '--force');
  if ((command !== 'backup' && command !== 'restore') || args.length !== 1 || (command === 'backup' && force))
    throw new UsageError('usage: backup-restore.ts backup <dir> | restore <dir> [--force]');
  const dir = resolve(args[0]!);
  if (command === 'backup') {
    const manifest = await backup(dir, process.env);
    console.log(`backup written to ${dir} (${manifest.collections.length} collections)`);
  } else {
    await restore(dir, force, process.env);
    console.log(`restored from ${dir}; start the services to let them recreate their indexes`);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  console.error(`${error instanceof UsageError ? '' : 'error: '}${redact(message)}`);
  process.exitCode = 1;
});
