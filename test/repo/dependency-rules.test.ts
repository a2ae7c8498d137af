/**
 * The dependency guard of `npm test` (scripts/check-dependencies.sh) bites: the repository's own
 * rules (.dependency-cruiser.cjs) and knip (knip.config.ts), run on small projects made here that
 * break each rule once and keep each allowed direction once, find exactly the breaks.
 */
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const DEPCRUISE = join(root, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');
const KNIP = join(root, 'node_modules/knip/bin/knip.js');
const made: string[] = [];

afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'subx-dependency-rules-'));
  made.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** Exit code and output of a command; a non-zero exit is a result here, not an error. */
async function exec(cwd: string, args: string[]): Promise<{ code: number; stdout: string }> {
  try {
    const { stdout } = await run(process.execPath, args, { cwd, timeout: 60_000, maxBuffer: 16 << 20 });
    return { code: 0, stdout };
  } catch (err) {
    const failed = err as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw err;
    return { code: failed.code, stdout: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
  cycle?: { name: string }[];
}

describe('dependency-cruiser with the repository rules', () => {
  it('fails on a circle, an upward import and a reach into another service; passes the allowed directions', async () => {
    const dir = project({
      // a circle held together by a type-only import (what the gateway's access module had)
      'packages/a/src/ledger.ts':
        "import type { Relay } from './relay.ts';\nexport type Ledger = { relay?: Relay };\n",
      'packages/a/src/relay.ts':
        "import { LEDGER } from './uses-ledger.ts';\nexport type Relay = { n: typeof LEDGER };\n",
      'packages/a/src/uses-ledger.ts':
        "import type { Ledger } from './ledger.ts';\nexport const LEDGER: Ledger = {};\n",
      // a package importing a service, and one importing a script
      'packages/a/src/up.ts': "export { X } from '../../../services/s/src/index.ts';\n",
      'packages/a/src/tool.ts': "import '../../../scripts/helper.ts';\n",
      // a service reaching into another service's internals, and one through its public entry
      'services/s/src/index.ts': "export const X = 1;\nexport { Y } from './internal.ts';\n",
      'services/s/src/internal.ts': 'export const Y = 2;\n',
      'services/t/src/main.ts':
        "import { Y } from '../../s/src/internal.ts';\nimport { X } from '../../s/src/index.ts';\nexport const Z = X + Y;\n",
      // allowed: a service's own tests, tooling importing anything
      'services/t/test/main.test.ts': "import { Z } from '../src/main.ts';\nexport const T = Z;\n",
      'scripts/helper.ts': "import { Y } from '../services/s/src/internal.ts';\nexport const H = Y;\n",
    });
    cpSync(join(root, 'tsconfig.base.json'), join(dir, 'tsconfig.base.json'));
    const cruise = (outputType: string) =>
      exec(dir, [
        DEPCRUISE,
        '--config',
        join(root, '.dependency-cruiser.cjs'),
        '--output-type',
        outputType,
        'packages',
        'services',
        'scripts',
      ]);
    // What `npm test` runs (the `err` reporter) exits non-zero...
    const guard = await cruise('err');
    expect(guard.code, guard.stdout).not.toBe(0);
    // ...and these are the violations, no more, no fewer.
    const result = await cruise('json');
    const violations = (JSON.parse(result.stdout) as { summary: { violations: Violation[] } }).summary
      .violations;
    const found = violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();
    expect(found).toEqual([
      // one report per circle, naming every module in it
      'no-circular: packages/a/src/ledger.ts -> packages/a/src/relay.ts',
      'no-import-of-tooling: packages/a/src/tool.ts -> scripts/helper.ts',
      'packages-stay-below-services: packages/a/src/up.ts -> services/s/src/index.ts',
      'services-through-public-entries: services/t/src/main.ts -> services/s/src/internal.ts',
    ]);
    const circle = violations.find((v) => v.rule.name === 'no-circular')!.cycle!.map((c) => c.name);
    expect(circle.sort()).toEqual([
      'packages/a/src/ledger.ts',
      'packages/a/src/relay.ts',
      'packages/a/src/uses-ledger.ts',
    ]);
  });

  it("fails on a gateway wing's routes, rows or admin used across a wall, and a floor room importing a wing", async () => {
    const g = 'services/gateway/src';
    const dir = project({
      // the floor: shared values and plumbing
      [`${g}/domain/operation-spec.ts`]: 'export type OperationSpec = { operationId: string };\n',
      [`${g}/http/route-context.ts`]:
        "import type { OperationSpec } from '../domain/operation-spec.ts';\nexport const routeOf = (s: OperationSpec) => s.operationId;\n",
      // a wing: its rows, its routes on the floor, its logic
      [`${g}/jobs/model.ts`]: 'export type Job = { id: string };\n',
      [`${g}/jobs/operations.ts`]:
        "import type { OperationSpec } from '../domain/operation-spec.ts';\nexport const JOB_OPERATIONS: OperationSpec[] = [];\n",
      [`${g}/jobs/routes.ts`]:
        "import { routeOf } from '../http/route-context.ts';\nimport { JOB_OPERATIONS } from './operations.ts';\nexport const registerJobs = () => JOB_OPERATIONS.map(routeOf);\n",
      [`${g}/jobs/sources.ts`]: 'export const normalized = (q: string) => q.trim();\n',
      [`${g}/api/operations.ts`]:
        "import type { OperationSpec } from '../domain/operation-spec.ts';\nexport const V1_OPERATIONS: OperationSpec[] = [];\n",
      // the assembler reads every wing's rows; the root mounts every wing's routes
      [`${g}/openapi/operations.ts`]:
        "import { V1_OPERATIONS } from '../api/operations.ts';\nimport { JOB_OPERATIONS } from '../jobs/operations.ts';\nexport const OPERATION_SPECS = [...V1_OPERATIONS, ...JOB_OPERATIONS];\n",
      [`${g}/admin/routes.ts`]: 'export const adminRoutes = 1;\n',
      [`${g}/admin/cli.ts`]: 'export const cli = 1;\n',
      // its own wing's routes: allowed
      [`${g}/admin/listener.ts`]:
        "import { adminRoutes } from './routes.ts';\nexport const listener = adminRoutes;\n",
      [`${g}/app.ts`]:
        "import { registerJobs } from './jobs/routes.ts';\nimport { listener } from './admin/listener.ts';\nimport { OPERATION_SPECS } from './openapi/operations.ts';\nexport const app = [registerJobs, listener, OPERATION_SPECS];\n",
      // broken: another wing's routes (the logic, sources.ts, is fine)
      [`${g}/watches/service.ts`]:
        "import { registerJobs } from '../jobs/routes.ts';\nimport { normalized } from '../jobs/sources.ts';\nexport const watches = [registerJobs, normalized];\n",
      // broken: another wing's rows instead of the assembled table (that one is fine)
      [`${g}/mcp/tools.ts`]:
        "import { JOB_OPERATIONS } from '../jobs/operations.ts';\nimport { OPERATION_SPECS } from '../openapi/operations.ts';\nexport const tools = [JOB_OPERATIONS, OPERATION_SPECS];\n",
      // broken: the floor importing a wing
      [`${g}/domain/mappers.ts`]: "import type { Job } from '../jobs/model.ts';\nexport type Mapped = Job;\n",
      // broken: a public wing importing the admin API
      [`${g}/api/extract.routes.ts`]: "import { cli } from '../admin/cli.ts';\nexport const extract = cli;\n",
    });
    cpSync(join(root, 'tsconfig.base.json'), join(dir, 'tsconfig.base.json'));
    const cruise = (outputType: string) =>
      exec(dir, [
        DEPCRUISE,
        '--config',
        join(root, '.dependency-cruiser.cjs'),
        '--output-type',
        outputType,
        'services',
      ]);
    const guard = await cruise('err');
    expect(guard.code, guard.stdout).not.toBe(0);
    const result = await cruise('json');
    const violations = (JSON.parse(result.stdout) as { summary: { violations: Violation[] } }).summary
      .violations;
    expect(violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort()).toEqual([
      `gateway-admin-stays-apart: ${g}/api/extract.routes.ts -> ${g}/admin/cli.ts`,
      `gateway-floor-imports-no-wing: ${g}/domain/mappers.ts -> ${g}/jobs/model.ts`,
      `gateway-operation-tables-assembled-once: ${g}/mcp/tools.ts -> ${g}/jobs/operations.ts`,
      `gateway-routes-mounted-by-their-wing: ${g}/watches/service.ts -> ${g}/jobs/routes.ts`,
    ]);
  });

  it('passes a project that keeps every rule', async () => {
    const dir = project({
      'packages/a/src/leaf.ts': 'export const A = 1;\n',
      'packages/a/src/user.ts': "import { A } from './leaf.ts';\nexport const B = A;\n",
      'services/s/src/index.ts':
        "import { B } from '../../../packages/a/src/user.ts';\nexport const X = B;\n",
      'services/t/src/main.ts': "import { X } from '../../s/src/index.ts';\nexport const Z = X;\n",
    });
    cpSync(join(root, 'tsconfig.base.json'), join(dir, 'tsconfig.base.json'));
    const result = await exec(dir, [
      DEPCRUISE,
      '--config',
      join(root, '.dependency-cruiser.cjs'),
      '--output-type',
      'err',
      'packages',
      'services',
    ]);
    expect(result.code, result.stdout).toBe(0);
  });
});

describe('dependency-cruiser with the rooms rule', () => {
  const rooms = (dir: string, outputType: string) =>
    exec(dir, [
      DEPCRUISE,
      '--config',
      join(root, '.dependency-cruiser-rooms.cjs'),
      '--output-type',
      outputType,
      'services',
    ]);

  it('fails on folders importing each other around a ring, with no file circle among them', async () => {
    const dir = project({
      // jobs -> schemas -> watches -> jobs: every file imports one way, the folders go round
      'services/s/src/jobs/model.ts':
        "import type { Field } from '../schemas/common.ts';\nexport type Job = { f: Field };\n",
      'services/s/src/schemas/common.ts': 'export type Field = string;\n',
      'services/s/src/schemas/watch.ts':
        "import type { Watch } from '../watches/model.ts';\nexport type WatchBody = { w: Watch };\n",
      'services/s/src/watches/model.ts':
        "import type { Job } from '../jobs/model.ts';\nexport type Watch = { j: Job };\n",
      // a test beside the code importing fixtures of test/ closes no ring
      'services/s/src/jobs/model.test.ts':
        "import { F } from '../../test/fixtures.ts';\nexport const T = F;\n",
      'services/s/test/fixtures.ts':
        "import type { Job } from '../src/jobs/model.ts';\nexport const F: Job[] = [];\n",
    });
    cpSync(join(root, 'tsconfig.base.json'), join(dir, 'tsconfig.base.json'));
    const guard = await rooms(dir, 'err');
    expect(guard.code, guard.stdout).not.toBe(0);
    expect(guard.stdout).toContain('no-folder-loop');
    const result = await rooms(dir, 'json');
    const violations = (JSON.parse(result.stdout) as { summary: { violations: Violation[] } }).summary
      .violations;
    expect(violations.length).toBeGreaterThan(0);
    expect(violations.every((v) => v.rule.name === 'no-folder-loop')).toBe(true);
    const folders = new Set(violations.flatMap((v) => [v.from, v.to]));
    expect([...folders].sort()).toEqual([
      'services/s/src/jobs',
      'services/s/src/schemas',
      'services/s/src/watches',
    ]);
  });

  it('passes folders whose imports point one way', async () => {
    const dir = project({
      'services/s/src/domain/field.ts': 'export type Field = string;\n',
      'services/s/src/jobs/model.ts':
        "import type { Field } from '../domain/field.ts';\nexport type Job = { f: Field };\n",
      'services/s/src/schemas/job.ts':
        "import type { Job } from '../jobs/model.ts';\nexport type JobBody = { j: Job };\n",
      'services/s/src/app.ts':
        "import type { JobBody } from './schemas/job.ts';\nexport type App = { b: JobBody };\n",
      'services/s/src/jobs/model.test.ts':
        "import { F } from '../../test/fixtures.ts';\nexport const T = F;\n",
      'services/s/test/fixtures.ts':
        "import type { Job } from '../src/jobs/model.ts';\nexport const F: Job[] = [];\n",
    });
    cpSync(join(root, 'tsconfig.base.json'), join(dir, 'tsconfig.base.json'));
    const result = await rooms(dir, 'err');
    expect(result.code, result.stdout).toBe(0);
  });
});

describe('knip', () => {
  it('fails on an unused file, an unused export and an unused dependency', async () => {
    const dir = project({
      'package.json': JSON.stringify({
        name: 'knip-fixture',
        private: true,
        type: 'module',
        exports: { '.': './src/index.ts' },
        dependencies: { 'left-pad': '^1.3.0' },
      }),
      'src/index.ts': "import { used } from './lib.ts';\nexport const api = used;\n",
      'src/lib.ts': 'export const used = 1;\nexport const forgotten = 2;\n',
      'src/orphan.ts': 'export const nobody = 3;\n',
    });
    const result = await exec(dir, [KNIP, '--no-progress', '--no-config-hints', '--reporter', 'json']);
    expect(result.code, result.stdout).not.toBe(0);
    const report = JSON.parse(result.stdout) as {
      files?: string[];
      issues: { file: string; dependencies: { name: string }[]; exports: { name: string }[] }[];
    };
    const files = report.files ?? report.issues.filter((i) => 'files' in i).map((i) => i.file);
    expect(JSON.stringify(files)).toContain('src/orphan.ts');
    const exports = report.issues.flatMap((i) => i.exports.map((e) => `${i.file}:${e.name}`));
    expect(exports).toContain('src/lib.ts:forgotten');
    expect(report.issues.flatMap((i) => i.dependencies.map((d) => d.name))).toContain('left-pad');
  });
});

describe('paths the import rules cannot see', () => {
  it('no package or service source runs or reads a file of scripts/ by path', () => {
    // A spawned path is no import: `packages/testing` once started `scripts/start-embedded.ts` so.
    const files = execFileSync(
      'git',
      [
        'ls-files',
        '-z',
        '--cached',
        '--others',
        '--exclude-standard',
        'packages/*/src/*.ts',
        'services/*/src/*.ts',
      ],
      {
        cwd: root,
        encoding: 'utf8',
      },
    )
      .split('\0')
      .filter(Boolean);
    expect(files.length).toBeGreaterThan(100);
    const offenders = files.flatMap((file) =>
      readFileSync(join(root, file), 'utf8')
        // comments may name a script for the reader
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .split('\n')
        .filter((line) => !line.trim().startsWith('//') && /['"`](\.\.\/)*scripts\//.test(line))
        .map((line) => `${file}: ${line.trim()}`),
    );
    expect(offenders).toEqual([]);
  });
});
