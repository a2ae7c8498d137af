/**
 * The `buf breaking` step of `npm test` (scripts/proto-breaking.sh) bites: in a small git
 * repository made here with this repository's proto/, a release tag and commits after it, the
 * script passes an additive change and fails a breaking one, against the last release even when
 * the breaking commit's parent already had the break (a break spread over two commits), and
 * against the merge-base on a branch. It runs the @bufbuild/buf npm binary on local history only.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const made: string[] = [];
const USAGE = 'proto/subx/events/v1/credit_usage.proto';

afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

async function git(cwd: string, ...args: string[]): Promise<void> {
  await run('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd,
    timeout: 30_000,
  });
}

/** A repository with proto/ and the script, its first commit on main tagged v1.0.0. */
async function released(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'subx-proto-breaking-'));
  made.push(dir);
  cpSync(join(root, 'proto'), join(dir, 'proto'), { recursive: true });
  mkdirSync(join(dir, 'scripts'));
  cpSync(join(root, 'scripts/proto-breaking.sh'), join(dir, 'scripts/proto-breaking.sh'));
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, '.gitignore'), 'node_modules\n');
  await git(dir, 'init', '-q', '-b', 'main');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-q', '-m', 'release');
  await git(dir, 'tag', 'v1.0.0');
  return dir;
}

async function change(dir: string, edit: (text: string) => string, message: string): Promise<void> {
  const path = join(dir, USAGE);
  writeFileSync(path, edit(readFileSync(path, 'utf8')));
  await git(dir, 'commit', '-q', '-am', message);
}

async function check(dir: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run('bash', ['scripts/proto-breaking.sh'], {
      cwd: dir,
      timeout: 60_000,
    });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const failed = err as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

const addField = (text: string): string =>
  text.replace(
    'map<string, string> attributes = 7;',
    'map<string, string> attributes = 7;\n  string note = 99;',
  );
const retypeCredits = (text: string): string => text.replace('int64 credits = 3;', 'string credits = 3;');

describe('scripts/proto-breaking.sh', () => {
  it('passes an additive change and fails a breaking one, against the last release', async () => {
    const dir = await released();
    await change(dir, addField, 'add a field');
    const additive = await check(dir);
    expect(additive.output).toContain('against v1.0.0');
    expect(additive.code).toBe(0);

    await change(dir, retypeCredits, 'retype credits');
    const breaking = await check(dir);
    expect(breaking.code).not.toBe(0);
    expect(breaking.output).toMatch(/credits/);

    // HEAD~1 already has the break: only the release shows it.
    await change(dir, (text) => `${text}\n// a comment\n`, 'comment');
    const spread = await check(dir);
    expect(spread.code).not.toBe(0);
    expect(spread.output).toContain('breaks compatibility with v1.0.0');
  });

  it('on a branch, fails a break against the merge-base with main', async () => {
    const dir = await released();
    await git(dir, 'tag', '-d', 'v1.0.0');
    await git(dir, 'checkout', '-q', '-b', 'feature');
    await change(dir, retypeCredits, 'retype credits');
    const result = await check(dir);
    expect(result.output).toContain('no release tag');
    expect(result.code).not.toBe(0);
  });
});
