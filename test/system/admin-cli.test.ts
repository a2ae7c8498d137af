/**
 * `subx-admin` (services/gateway/src/admin/cli.ts) against the real `npm start`'s admin listener:
 * the key it prints authenticates at once, regenerate-key replaces it, and a wrong token or a wrong
 * command fails with a clear message and its own exit code.
 */
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeYouTube } from '@subx/testing/fake-youtube';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import { startNpmStart } from './npm-start-process.ts';
import type { NpmStartProcess } from './npm-start-process.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const ADMIN_TOKEN = 'system-test-admin-token-cli-0123456789ab';

let youtube: FakeYouTube;
let system: NpmStartProcess;

function cli(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', `${root}services/gateway/src/admin/cli.ts`, ...args],
      {
        env: { PATH: process.env.PATH ?? '', ADMIN_TOKEN, SUBX_ADMIN_URL: system.adminUrl, ...env },
        timeout: 30_000,
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const account = async (key: string) =>
  fetch(`${system.base}/api/v1/account`, { headers: { 'x-api-key': key } });

beforeAll(async () => {
  youtube = await startFakeYouTube();
  system = await startNpmStart({ YOUTUBE_BASE_URL: youtube.url, ADMIN_TOKEN });
}, 90_000);

afterAll(async () => {
  await system?.stop();
  await youtube?.close();
});

describe('subx-admin on npm start', () => {
  it('create-account prints a key that works; regenerate-key replaces it', async () => {
    const created = await cli(['create-account', '--tier', 'business', '--credits', '7']);
    expect(created.code, created.stderr).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^sxk_v1_[A-Za-z0-9]{32}$/);
    const id = /account (acct_[0-9a-f]{32}) \(business, 7 credits\)/.exec(created.stderr)?.[1];
    expect(id, created.stderr).toBeDefined();
    const res = await account(key);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ tier: 'business', credits_balance: 7 });

    const regenerated = await cli(['regenerate-key', '--account', id!]);
    expect(regenerated.code, regenerated.stderr).toBe(0);
    const fresh = regenerated.stdout.trim();
    expect(fresh).not.toBe(key);
    expect((await account(fresh)).status).toBe(200);
    expect((await account(key)).status).toBe(401);
  });

  it('a wrong token is 1 with the API error; bad usage is 2 with the usage; no token is named', async () => {
    const wrong = await cli(['create-account'], { ADMIN_TOKEN: 'x'.repeat(40) });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('401 UNAUTHORIZED');
    expect(wrong.stdout).toBe('');
    const usage = await cli(['create-account', '--credits=-3']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--credits must be a whole number');
    expect(usage.stderr).toContain('usage:');
    const unknown = await cli(['--tier', 'pro']);
    expect(unknown.code).toBe(2);
    const missing = await cli(['create-account'], { ADMIN_TOKEN: '' });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('ADMIN_TOKEN is not set');
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const unreachable = await cli(['create-account'], { SUBX_ADMIN_URL: `http://127.0.0.1:${port}` });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain('did not answer (ECONNREFUSED)');
  });
});
