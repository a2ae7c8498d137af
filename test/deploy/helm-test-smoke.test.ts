// The `helm test` smoke calls, run for real: the script and environment the chart renders for the
// test Pod (ci/demo-values.yaml, templates/tests/smoke-test.yaml) are run with Node against
// `npm run demo` (the recorded platform, the fixed demo key), as the Pod runs them against the
// gateway Service. Only the gateway address differs: the Service name becomes the launcher's port.
// The launcher runs on embedded adapters (its batch fan-out goes over the in-process bus; in the
// cluster the chart's KAFKA_BROKERS puts it on Kafka). Needs helm like helm-render.test.ts.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { recordRequirement } from '@subx/testing/engines';
import { EMBEDDED_ENV, spawnLauncher, type Launcher } from '@subx/testing/launcher';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const chartDir = path.join(repoRoot, 'deploy/helm/subx');
const helm = [
  process.env.HELM,
  path.join(process.env.SUBX_TOOLS_DIR ?? path.join(homedir(), '.cache/subx-tools'), 'bin/helm'),
  ...(process.env.PATH ?? '').split(path.delimiter).map((dir) => path.join(dir, 'helm')),
].find((c): c is string => !!c && existsSync(c));
if (!helm) {
  if (process.env.CI) throw new Error('helm not found: run scripts/validate-deploy.sh first');
  console.warn(
    '\n# SKIPPING test/deploy/helm-test-smoke.test.ts: helm not found (bash scripts/validate-deploy.sh)\n',
  );
}

type Env = { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } };
type Rendered = { kind: string; metadata: { name: string }; data?: Record<string, string>; spec?: unknown };

/** The test Pod's script and environment as the chart renders them for `valuesFile`. */
function renderSmokeTest(valuesFile: string): { script: string; env: Record<string, string> } {
  const out = execFileSync(
    helm as string,
    ['template', 'subx', chartDir, '-f', valuesFile, '--show-only', 'templates/tests/smoke-test.yaml'],
    { encoding: 'utf8' },
  );
  const objs = parseAllDocuments(out).map((d) => d.toJS() as Rendered);
  const script = objs.find((o) => o.kind === 'ConfigMap')?.data?.['smoke-test.mjs'];
  const pod = objs.find((o) => o.kind === 'Pod')?.spec as { containers: { env: Env[] }[] };
  if (!script || !pod) throw new Error('the chart rendered no smoke-test ConfigMap and Pod');
  const env: Record<string, string> = {};
  for (const e of pod.containers[0]?.env ?? []) {
    const ref = e.valueFrom?.secretKeyRef;
    if (!ref) {
      env[e.name] = e.value ?? '';
      continue;
    }
    const secret = objs.find((o) => o.kind === 'Secret' && o.metadata.name === ref.name);
    const encoded = secret?.data?.[ref.key];
    if (!encoded) throw new Error(`${e.name}: Secret ${ref.name} not rendered`);
    env[e.name] = Buffer.from(encoded, 'base64').toString();
  }
  return { script, env };
}

type Run = { code: number | null; stdout: string; stderr: string; ms: number };

let workDir = '';
let launcher: Launcher | undefined;
let gatewayUrl = '';

/** Runs a script file with only `env` (plus PATH): nothing of the test's environment leaks in. */
function runScript(scriptFile: string, env: Record<string, string>): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [scriptFile], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 150_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
  });
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe.skipIf(!helm)('helm test smoke calls against npm run demo', () => {
  recordRequirement({
    kind: 'tool',
    name: 'helm',
    ran: !!helm,
    reason: 'helm not found (HELM, PATH, ~/.cache/subx-tools/bin)',
    enable: 'bash scripts/validate-deploy.sh',
  });
  let demo: { script: string; env: Record<string, string> };
  let scriptFile = '';

  beforeAll(async () => {
    workDir = mkdtempSync(path.join(tmpdir(), 'subx-smoke-'));
    demo = renderSmokeTest(path.join(chartDir, 'ci/demo-values.yaml'));
    scriptFile = path.join(workDir, 'smoke-test.mjs');
    writeFileSync(scriptFile, demo.script);
    launcher = spawnLauncher(['--demo'], {
      ...EMBEDDED_ENV,
      LOG_LEVEL: 'error',
      YOUTUBE_BASE_URL: '',
      ADMIN_TOKEN: '',
      API_KEY_PEPPER: '',
    });
    await launcher.waitFor(/Ctrl-C stops everything/, 60_000);
    gatewayUrl = /subx is running at (http:\/\/\S+)/.exec(launcher.output())![1]!;
  }, 90_000);

  afterAll(async () => {
    await launcher?.stop();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it('passes with the demo values: ready, an extract, a batch; the key never printed', async () => {
    expect(demo.env.SMOKE_GATEWAY_URL).toBe('http://subx-gateway:8080');
    const run = await runScript(scriptFile, { ...demo.env, SMOKE_GATEWAY_URL: gatewayUrl });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/smoke: ok {3}GET \/health\/ready: 200/);
    expect(run.stdout).toMatch(/smoke: ok {3}POST \/api\/v1\/extract F1xioXWb8CY: \d+ segments, language en/);
    expect(run.stdout).toMatch(/smoke: ok {3}POST \/api\/v1\/batch: 2\/2 videos extracted/);
    expect(run.stdout).toContain('smoke: PASS (3 checks)');
    expect(run.stdout + run.stderr).not.toContain(demo.env.SMOKE_API_KEY);
  });

  it('with the default values, checks readiness only', async () => {
    const { env } = renderSmokeTest(path.join(chartDir, 'ci/dev-values.yaml'));
    const run = await runScript(scriptFile, { ...env, SMOKE_GATEWAY_URL: gatewayUrl });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('smoke: PASS (1 checks)');
  });

  it('fails with the API error when the key is refused', async () => {
    const wrongKey = `sxk_v1_${'x'.repeat(32)}`;
    const run = await runScript(scriptFile, {
      ...demo.env,
      SMOKE_GATEWAY_URL: gatewayUrl,
      SMOKE_API_KEY: wrongKey,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/smoke: FAIL extract https:\/\/youtu\.be\/F1xioXWb8CY: HTTP 401 UNAUTHORIZED/);
    expect(run.stdout + run.stderr).not.toContain(wrongKey);
  });

  it('fails naming the batch item that failed', async () => {
    const run = await runScript(scriptFile, {
      ...demo.env,
      SMOKE_GATEWAY_URL: gatewayUrl,
      SMOKE_BATCH_URLS: 'https://youtu.be/it3OtbTxQk0,https://youtu.be/8VajtrESJzA',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/smoke: FAIL batch of 2: https:\/\/youtu\.be\/8VajtrESJzA VIDEO_UNAVAILABLE/);
  });

  it('gives up on an unreachable gateway within its bound, saying why', async () => {
    const run = await runScript(scriptFile, {
      ...demo.env,
      SMOKE_GATEWAY_URL: `http://127.0.0.1:${await closedPort()}`,
      SMOKE_READY_WAIT_MS: '1500',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/smoke: FAIL health\/ready: not ready within 1500 ms; last: .*ECONNREFUSED/);
    expect(run.ms).toBeLessThan(10_000);
  });

  it('refuses extract settings without a key before calling anything', async () => {
    const run = await runScript(scriptFile, {
      ...demo.env,
      SMOKE_GATEWAY_URL: gatewayUrl,
      SMOKE_API_KEY: '',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('smoke: FAIL config: SMOKE_VIDEO_URL/SMOKE_BATCH_URLS need SMOKE_API_KEY');
  });
});
