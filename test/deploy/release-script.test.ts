// scripts/release.sh and scripts/registry.sh without images: what the release refuses before it
// builds anything, and a chart-only release (RELEASE_COMPONENTS empty) into a real registry
// (CNCF distribution, scripts/registry.sh) on a port of its own, pulled back with helm as an
// operator would. The images' part (labels, SBOMs, pulls by the pushed digests) is checked by the
// cluster test (scripts/cluster/test.sh). Skipped loudly without the registry binary or helm,
// failing in CI, where the cluster step builds both before this runs.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { chartDir, helm, ofKind, podSpec, recordHelm, type Obj } from './helm-chart.ts';

const repoRoot = path.resolve(chartDir, '../../..');
const registryBin = path.join(
  process.env.SUBX_TOOLS_DIR ?? path.join(homedir(), '.cache/subx-tools'),
  'bin/registry',
);
const hasRegistry = existsSync(registryBin);
if (!hasRegistry && process.env.CI) {
  throw new Error(`registry not found at ${registryBin}: run bash scripts/registry.sh build first`);
}
if (!hasRegistry) {
  console.warn(
    `\n# SKIPPING test/deploy/release-script.test.ts: no ${registryBin} (bash scripts/registry.sh build)\n`,
  );
}
const appVersion = (parse(readFileSync(path.join(chartDir, 'Chart.yaml'), 'utf8')) as { appVersion: string })
  .appVersion;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function run(cmd: string, args: string[], env: Record<string, string>) {
  const r = spawnSync(cmd, args, {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe.skipIf(!helm || !hasRegistry)('scripts/release.sh: a chart release into a real registry', () => {
  recordHelm();
  const dir = mkdtempSync(path.join(tmpdir(), 'subx-release-'));
  let port = 0;
  let registryEnv: Record<string, string> = {};
  const release = (version: string, env: Record<string, string> = {}) =>
    run('bash', ['scripts/release.sh', version], {
      REGISTRY: `localhost:${port}`,
      RELEASE_COMPONENTS: '',
      RELEASE_ALLOW_DIRTY: '1',
      RELEASE_OUT: path.join(dir, 'out', version),
      HELM: helm ?? '',
      ...env,
    });

  beforeAll(async () => {
    port = await freePort();
    registryEnv = { REGISTRY_ADDR: `127.0.0.1:${port}`, REGISTRY_RUN_DIR: path.join(dir, 'registry') };
    const up = run('bash', ['scripts/registry.sh', 'up'], registryEnv);
    expect(up.stderr).toContain('registry v3');
    expect(up.stdout.trim()).toBe(`REGISTRY=localhost:${port}`);
  }, 60_000);
  afterAll(() => {
    run('bash', ['scripts/registry.sh', 'down'], registryEnv);
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses what is not a semantic version, or not the version the services report', () => {
    for (const bad of ['v1.0.0', '1.0', '1.0.0+build.5', '01.0.0']) {
      const r = release(bad);
      expect(r.status, bad).toBe(1);
      expect(r.stderr).toContain(`VERSION '${bad}' is not a semantic version`);
    }
    const other = release('9.9.9');
    expect(other.status).toBe(1);
    expect(other.stderr).toContain(`does not match the version the services report (${appVersion}`);
    expect(release('').stderr).toContain('usage: release.sh VERSION');
  });

  it('refuses a registry that does not answer, within its bound', async () => {
    const closed = await freePort();
    const t0 = Date.now();
    const r = release(`${appVersion}-test.0`, { REGISTRY: `127.0.0.1:${closed}`, RELEASE_HTTP_TIMEOUT: '2' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`registry 127.0.0.1:${closed} does not answer`);
    expect(Date.now() - t0).toBeLessThan(30_000);
  });

  it('pushes the chart as an OCI artifact: version = appVersion = VERSION, images from the registry', () => {
    const version = `${appVersion}-test.1`;
    const r = release(version);
    expect(r.stderr, r.stderr).not.toContain('ERROR');
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe(`oci://localhost:${port}/charts/subx --version ${version}`);
    const digests = readFileSync(path.join(dir, 'out', version, 'images.txt'), 'utf8');
    expect(digests).toMatch(
      new RegExp(`^oci://localhost:${port}/charts/subx:${version} sha256:[0-9a-f]{64}$`, 'm'),
    );

    // As an operator installs it: from the registry, nothing local.
    const pulled = path.join(dir, 'pulled');
    mkdirSync(pulled);
    const pull = run(
      helm ?? '',
      ['pull', `oci://localhost:${port}/charts/subx`, '--version', version, '--plain-http', '-d', pulled],
      {},
    );
    expect(pull.status, pull.stderr).toBe(0);
    const tgz = path.join(pulled, `subx-${version}.tgz`);
    const chart = parse(run(helm ?? '', ['show', 'chart', tgz], {}).stdout) as {
      version: string;
      appVersion: string;
    };
    expect(chart).toMatchObject({ version, appVersion: version });
    const rendered = run(
      helm ?? '',
      [
        'template',
        'subx',
        tgz,
        '--set',
        'secrets.values.ADMIN_TOKEN=test-admin-token-0123456789abcdef0123',
        '--set',
        'secrets.values.API_KEY_PEPPER=test-pepper-0123456789abcdef-0123456789',
        '--set',
        'secrets.values.SMTP_URL=smtp://mail.example.com:587',
      ],
      {},
    );
    expect(rendered.status, rendered.stderr).toBe(0);
    const objs = parseAllDocuments(rendered.stdout)
      .map((doc) => doc.toJS() as Obj | null)
      .filter((o): o is Obj => o !== null);
    const images = ofKind(objs, 'Deployment').map((d) => podSpec(d).containers[0]?.image);
    expect(images.length).toBeGreaterThanOrEqual(5);
    for (const image of images)
      expect(image).toMatch(new RegExp(`^localhost:${port}/subx/[a-z]+:${version}$`));
  });
});
