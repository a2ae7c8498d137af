/**
 * A backup holds password and key hashes and e-mail addresses (docs/operations.md, "Backup"):
 * scripts/backup.sh makes its directories 0700 and its files 0600 whatever the umask, and with
 * BACKUP_PASSPHRASE or BACKUP_AGE_RECIPIENTS encrypts every data file with age, which
 * scripts/restore.sh reads back only with the passphrase or the identity. On the MongoDB-compatible
 * server, on a database of this run, backed up, dropped and restored (Redis is left out: a restore
 * refuses a Redis that holds keys of the saved kinds, and the engines here are shared).
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateIdentity, identityToRecipient } from 'age-encryption';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithEngine } from '@subx/testing/engines';

const root = fileURLToPath(new URL('../../', import.meta.url));
const EMAIL = 'owner-of-the-backup@example.com';

/** Every path under `dir` (itself included) with its permission bits. */
function modes(dir: string): { path: string; dir: boolean; mode: number }[] {
  const out = [{ path: dir, dir: true, mode: statSync(dir).mode & 0o777 }];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    out.push({ path, dir: entry.isDirectory(), mode: statSync(path).mode & 0o777 });
  }
  return out;
}

describeWithEngine('mongo', 'backups are private, and encrypted when asked', (mongoUrl) => {
  const run = randomUUID().slice(0, 8);
  const source = `backup_protect_${run}`;
  const scratch = mkdtempSync(join(tmpdir(), 'subx-backup-protect-'));
  const client = new MongoClient(mongoUrl);
  let original: unknown[] = [];

  const script = (name: 'backup' | 'restore', dir: string, db: string, env: Record<string, string> = {}) =>
    spawnSync('bash', ['-c', `umask 022 && exec bash scripts/${name}.sh "$0"`, dir], {
      cwd: root,
      // Only what this test names: the shared engines' REDIS_URL would put Redis in the backup.
      env: { PATH: process.env.PATH, HOME: process.env.HOME, MONGO_URL: mongoUrl, MONGO_DB: db, ...env },
      encoding: 'utf8',
      timeout: 120_000,
    });

  const accountsOf = async (db: string) =>
    (
      await client
        .db(db)
        .collection('accounts')
        .find({}, { sort: { _id: 1 } })
        .toArray()
    ).map((d) => ({ ...d }));

  beforeAll(async () => {
    await client.connect();
    await client
      .db(source)
      .collection('accounts')
      .insertMany([
        { _id: 'acct_1' as never, email: EMAIL, key: { hash: 'hash-one' }, credits: 5 },
        { _id: 'acct_2' as never, email: null, key: { hash: 'hash-two' }, credits: 0 },
      ]);
    original = await accountsOf(source);
  });

  afterAll(async () => {
    await client
      .db(source)
      .dropDatabase()
      .catch(() => {});
    await client.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('writes 0700 directories and 0600 files under a 022 umask', () => {
    const dir = join(scratch, 'plain');
    const done = script('backup', dir, source);
    expect(done.status, done.stderr).toBe(0);
    const all = modes(dir);
    expect(all.filter((e) => e.dir).length).toBeGreaterThanOrEqual(3);
    for (const entry of all) expect(entry.mode.toString(8), entry.path).toBe(entry.dir ? '700' : '600');
    expect(readFileSync(join(dir, 'mongo', source, 'accounts.ndjson'), 'utf8')).toContain(EMAIL);
  });

  it('with a passphrase: age files without the data in the clear, restored only with it', async () => {
    const dir = join(scratch, 'passphrase');
    const passphrase = 'correct horse battery staple backup';
    const done = script('backup', dir, source, { BACKUP_PASSPHRASE: passphrase });
    expect(done.status, done.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    expect(manifest.encryption).toEqual({ kind: 'age', to: 'passphrase' });
    const file = join(dir, 'mongo', source, 'accounts.ndjson.age');
    const bytes = readFileSync(file);
    expect(bytes.subarray(0, 21).toString()).toBe('age-encryption.org/v1');
    expect(bytes.toString('latin1')).not.toContain(EMAIL);
    for (const entry of modes(dir))
      expect(entry.mode.toString(8), entry.path).toBe(entry.dir ? '700' : '600');

    const target = source;
    await client.db(source).dropDatabase();
    const refused = script('restore', dir, target);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('set BACKUP_PASSPHRASE');
    const wrong = script('restore', dir, target, { BACKUP_PASSPHRASE: 'not the passphrase' });
    expect(wrong.status).not.toBe(0);
    expect(await accountsOf(target)).toEqual([]);
    const restored = script('restore', dir, target, { BACKUP_PASSPHRASE: passphrase });
    expect(restored.status, restored.stderr).toBe(0);
    expect(await accountsOf(target)).toEqual(original);
  });

  it('to an age public key: restored with the matching identity only', async () => {
    const identity = await generateIdentity();
    const recipient = await identityToRecipient(identity);
    const dir = join(scratch, 'recipient');
    const done = script('backup', dir, source, { BACKUP_AGE_RECIPIENTS: recipient });
    expect(done.status, done.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')).encryption).toEqual({
      kind: 'age',
      to: 'recipients',
    });
    expect(readFileSync(join(dir, 'mongo', source, 'accounts.ndjson.age')).toString('latin1')).not.toContain(
      EMAIL,
    );

    const target = source;
    await client.db(source).dropDatabase();
    const other = await generateIdentity();
    const wrong = script('restore', dir, target, { BACKUP_AGE_IDENTITY: other });
    expect(wrong.status).not.toBe(0);
    expect(await accountsOf(target)).toEqual([]);
    const restored = script('restore', dir, target, { BACKUP_AGE_IDENTITY: identity });
    expect(restored.status, restored.stderr).toBe(0);
    expect(await accountsOf(target)).toEqual(original);
  });
});
