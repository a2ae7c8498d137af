/**
 * Black-box, as an SDK user: clients generated from the live /openapi.json of `npm start` (fake
 * platform) call every operation and every format, and one error of each kind.
 *
 * TypeScript: openapi-typescript turns the live document into `schema.d.ts` in a scratch directory,
 * `tsc --strict` checks test/system/generated-clients/driver.ts against it, and the driver runs on
 * openapi-fetch. Python: scripts/generated-clients.sh generates a client with openapi-python-client
 * (a virtual environment cached under ~/.cache/subx) and runs driver.py with it; it needs PyPI on its
 * first run, so it runs under CI=true (scripts/test.sh) or once that environment is cached.
 */
import { execFile } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playlistIds, startFakeYouTube, videoIds, type FakeYouTube } from '@subx/testing/fake-youtube';
import { startNpmStart, type NpmStartProcess } from './npm-start-process.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const DRIVERS = join(root, 'test/system/generated-clients');
const ADMIN_TOKEN = 'system-test-admin-token-clients-0123456789';
/** scripts/generated-clients.sh keeps its environment here (its PYTHON_CLIENT_VERSION). */
const PYTHON_VENV = join(
  process.env.SUBX_CACHE_DIR ?? join(homedir(), '.cache/subx'),
  'openapi-python-client-0.29.1',
);

let youtube: FakeYouTube;
let system: NpmStartProcess;
let scratch = '';
let driverEnv: Record<string, string> = {};
const FREE_DAILY_LIMIT = 3;

/** A new free account's key (each driver spends one's daily limit). */
async function freeKey(): Promise<string> {
  const created = await fetch(`${system.adminUrl}/admin/v1/accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tier: 'free' }),
  });
  expect(created.status).toBe(201);
  return ((await created.json()) as { api_key: string }).api_key;
}

function run(
  command: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; timeoutMs: number },
): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      {
        cwd: options.cwd ?? root,
        env: { ...process.env, ...options.env },
        timeout: options.timeoutMs,
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) || 1 : 0, output: `${stdout}${stderr}` }),
    );
  });
}

beforeAll(async () => {
  youtube = await startFakeYouTube();
  system = await startNpmStart({
    YOUTUBE_BASE_URL: youtube.url,
    ADMIN_TOKEN,
    JOBS_POLL_MS: '100',
    // A free key's day ends after FREE_DAILY_LIMIT requests: a 429 each driver reaches cheaply.
    ACCESS_PRICING_JSON: JSON.stringify({ dailyLimit: { free: FREE_DAILY_LIMIT } }),
  });
  driverEnv = {
    SUBX_BASE: system.base,
    SUBX_KEY: system.apiKey,
    SUBX_FREE_DAILY_LIMIT: String(FREE_DAILY_LIMIT),
    SUBX_VIDEO: videoIds.manualAndAuto,
    SUBX_PRIVATE_VIDEO: videoIds.private,
    SUBX_COMMENTS_VIDEO: videoIds.syntheticComments,
    SUBX_PLAYLIST: playlistIds.synthetic,
  };
  scratch = mkdtempSync(join(tmpdir(), 'subx-clients-'));
}, 120_000);

afterAll(async () => {
  await system?.stop();
  await youtube?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('generated clients against npm start', () => {
  it('TypeScript: openapi-typescript types, checked by tsc --strict, driven through openapi-fetch', async () => {
    const dir = join(scratch, 'ts');
    rmSync(dir, { recursive: true, force: true });
    symlinkSync(join(root, 'node_modules'), join(scratch, 'node_modules'), 'dir');
    const ast = await openapiTS(new URL(`${system.base}/openapi.json`));
    const types = astToString(ast);
    // Named schemas, not ExtractResponse200.
    expect(types).toContain('ExtractResult: {');
    expect(types).toMatch(
      /BatchItem: components\["schemas"\]\["BatchItemSuccess"\] \| components\["schemas"\]\["BatchItemFailure"\]/,
    );
    mkdirSync(dir);
    writeFileSync(join(dir, 'schema.d.ts'), types);
    copyFileSync(join(DRIVERS, 'driver.ts'), join(dir, 'driver.ts'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2024',
          lib: ['ES2024', 'DOM'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          types: ['node'],
          strict: true,
          noUncheckedIndexedAccess: true,
          allowImportingTsExtensions: true,
          erasableSyntaxOnly: true,
          verbatimModuleSyntax: true,
          noEmit: true,
          skipLibCheck: false,
        },
        files: ['driver.ts', 'schema.d.ts'],
      }),
    );
    const tsc = await run(join(root, 'node_modules/.bin/tsc'), ['-p', join(dir, 'tsconfig.json')], {
      timeoutMs: 120_000,
    });
    expect(tsc.output, 'tsc --strict on the driver').toBe('');
    expect(tsc.code).toBe(0);
    const driver = await run(
      join(root, 'node_modules/.bin/node'),
      ['--disable-warning=ExperimentalWarning', join(dir, 'driver.ts')],
      { cwd: dir, env: { ...driverEnv, SUBX_FREE_KEY: await freeKey() }, timeoutMs: 120_000 },
    );
    expect(driver.code, driver.output).toBe(0);
    expect(JSON.parse(driver.output.trim().split('\n').at(-1)!)).toMatchObject({ ok: true });
  });

  it.runIf(process.env.CI === 'true' || existsSync(join(PYTHON_VENV, 'bin/openapi-python-client')))(
    'Python: openapi-python-client, typed models, every operation and format (scripts/generated-clients.sh)',
    async () => {
      const result = await run('bash', [join(root, 'scripts/generated-clients.sh')], {
        env: { ...driverEnv, SUBX_FREE_KEY: await freeKey() },
        timeoutMs: 600_000,
      });
      expect(result.code, result.output).toBe(0);
      expect(result.output).toContain('"ok": true');
    },
    660_000,
  );
});
