// The `helm test` hook (templates/tests/smoke-test.yaml, files/smoke-test.mjs), in two parts:
// 1. its shape, through a real `helm template` of every ci/*.yaml: test hooks only, the script of
//    the chart run with the gateway image against the gateway Service, restricted, keyed from a
//    Secret, off when asked;
// 2. the smoke calls, run for real: the script and environment the chart renders for the test Pod
//    (ci/demo-values.yaml) are run with Node against `npm run demo` (the recorded platform, the fixed
//    demo key), as the Pod runs them against the gateway Service. Only the gateway address differs:
//    the Service name becomes the launcher's port. The launcher runs on embedded adapters (its batch
//    fan-out goes over the in-process bus; in the cluster the chart's KAFKA_BROKERS puts it on Kafka).
// Needs helm like helm-render.test.ts: skipped loudly without it, failing in CI.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { recordRequirement } from '@subx/testing/engines';
import { freePort } from '@subx/testing/free-port';
import { EMBEDDED_ENV, spawnLauncher, type Launcher } from '@subx/embedded/launcher';

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
    '\n# SKIPPING test/deploy/helm-test-hook.test.ts: helm not found (bash scripts/validate-deploy.sh)\n',
  );
}

// Loose shapes of the rendered objects this file reads.
type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  data?: Record<string, string>;
  spec?: unknown;
};
type Env = {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
};
type TestPod = {
  restartPolicy?: string;
  activeDeadlineSeconds?: number;
  automountServiceAccountToken?: boolean;
  imagePullSecrets?: { name: string }[];
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type: string } };
  containers: {
    image: string;
    args?: string[];
    env?: Env[];
    resources?: { limits?: Record<string, string> };
    securityContext?: {
      allowPrivilegeEscalation?: boolean;
      readOnlyRootFilesystem?: boolean;
      capabilities?: { drop?: string[] };
    };
    volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  }[];
  volumes?: { name: string; configMap?: { name: string } }[];
};

function render(valuesFile: string, extraArgs: string[] = []): Obj[] {
  const out = execFileSync(
    helm as string,
    ['template', 'subx', chartDir, '--namespace', 'subx', '-f', valuesFile, ...extraArgs],
    { encoding: 'utf8', maxBuffer: 32 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return parseAllDocuments(out)
    .map((doc) => doc.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
}

const component = (o: Obj): string | undefined => o.metadata.labels?.['app.kubernetes.io/component'];
const ofKind = (objs: Obj[], kind: string): Obj[] => objs.filter((o) => o.kind === kind);
const examples = readdirSync(path.join(chartDir, 'ci')).filter((f) => f.endsWith('.yaml'));

/** The test Pod's script and environment as the chart renders them for `valuesFile`. */
function renderSmokeTest(valuesFile: string): { script: string; env: Record<string, string> } {
  const out = execFileSync(
    helm as string,
    ['template', 'subx', chartDir, '-f', valuesFile, '--show-only', 'templates/tests/smoke-test.yaml'],
    { encoding: 'utf8' },
  );
  const objs = parseAllDocuments(out).map((d) => d.toJS() as Obj);
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

describe.skipIf(!helm)('helm test hook: what the chart renders', () => {
  recordRequirement({
    kind: 'tool',
    name: 'helm',
    ran: !!helm,
    reason: 'helm not found (HELM, PATH, ~/.cache/subx-tools/bin)',
    enable: 'bash scripts/validate-deploy.sh',
  });
  const smoke = (objs: Obj[]) => objs.filter((o) => component(o) === 'smoke-test');
  const testPod = (objs: Obj[]) => {
    const pod = smoke(objs).find((o) => o.kind === 'Pod');
    if (!pod) throw new Error('no smoke-test Pod rendered');
    return { pod, spec: pod.spec as TestPod };
  };
  const envOf = (spec: TestPod) => new Map((spec.containers[0]?.env ?? []).map((e) => [e.name, e]));

  it('renders a test-hook Pod that runs the chart script with the gateway image against the gateway Service', () => {
    const objs = render(path.join(chartDir, 'ci/dev-values.yaml'));
    const hooks = smoke(objs);
    expect(hooks.map((o) => o.kind).sort()).toEqual(['ConfigMap', 'Pod']);
    for (const o of hooks) {
      expect(o.metadata.annotations?.['helm.sh/hook'], o.kind).toBe('test');
      expect(o.metadata.annotations?.['helm.sh/hook-delete-policy'], o.kind).toBe('before-hook-creation');
    }
    // The script's ConfigMap exists before the Pod that mounts it.
    const cm = hooks.find((o) => o.kind === 'ConfigMap') as Obj;
    expect(Number(cm.metadata.annotations?.['helm.sh/hook-weight'])).toBeLessThan(0);
    expect(cm.data?.['smoke-test.mjs']).toBe(
      readFileSync(path.join(chartDir, 'files/smoke-test.mjs'), 'utf8'),
    );

    const { spec } = testPod(objs);
    const [c] = spec.containers;
    const gateway = ofKind(objs, 'Deployment').find((d) => component(d) === 'gateway') as Obj;
    expect(c?.image).toBe(
      (gateway.spec as { template: { spec: TestPod } }).template.spec.containers[0]?.image,
    );
    expect(c?.args).toEqual(['node', '/smoke/smoke-test.mjs']);
    expect(c?.volumeMounts).toContainEqual({ name: 'script', mountPath: '/smoke', readOnly: true });
    expect(spec.volumes?.find((v) => v.name === 'script')?.configMap?.name).toBe(cm.metadata.name);
    expect(spec.restartPolicy).toBe('Never');
    expect(spec.activeDeadlineSeconds).toBeGreaterThan(0);

    const gatewaySvc = ofKind(objs, 'Service').find((s) => component(s) === 'gateway') as Obj;
    const port = (gatewaySvc.spec as { ports: { port: number }[] }).ports[0]?.port;
    const env = envOf(spec);
    expect(env.get('SMOKE_GATEWAY_URL')?.value).toBe(`http://${gatewaySvc.metadata.name}:${port}`);
    // Default: health only, no key anywhere.
    expect(env.get('SMOKE_VIDEO_URL')?.value).toBe('');
    expect(env.get('SMOKE_BATCH_URLS')?.value).toBe('');
    expect(env.has('SMOKE_API_KEY')).toBe(false);
    expect(Number(env.get('SMOKE_TIMEOUT_MS')?.value)).toBeGreaterThan(0);
  });

  it('runs restricted: non-root, seccomp, read-only root, no capabilities, no token, bounded memory', () => {
    for (const file of examples) {
      const { spec } = testPod(render(path.join(chartDir, 'ci', file)));
      expect(spec.securityContext?.runAsNonRoot, file).toBe(true);
      expect(spec.securityContext?.runAsUser, file).not.toBe(0);
      expect(spec.securityContext?.seccompProfile?.type, file).toBe('RuntimeDefault');
      expect(spec.automountServiceAccountToken, file).toBe(false);
      const [c] = spec.containers;
      expect(c?.securityContext?.allowPrivilegeEscalation, file).toBe(false);
      expect(c?.securityContext?.readOnlyRootFilesystem, file).toBe(true);
      expect(c?.securityContext?.capabilities?.drop, file).toEqual(['ALL']);
      expect(c?.resources?.limits?.memory, file).toBeTruthy();
    }
  });

  it('with the demo values, extracts and batches with the key from a test-only Secret, never a plain value', () => {
    const objs = render(path.join(chartDir, 'ci/demo-values.yaml'));
    const { spec } = testPod(objs);
    const env = envOf(spec);
    expect(env.get('SMOKE_VIDEO_URL')?.value).toBe('https://youtu.be/F1xioXWb8CY');
    expect(env.get('SMOKE_BATCH_URLS')?.value).toBe(
      'https://youtu.be/it3OtbTxQk0,https://youtu.be/Kn56bMZ9OE8',
    );
    const key = env.get('SMOKE_API_KEY');
    expect(key?.value).toBeUndefined();
    const secret = smoke(objs).find((o) => o.kind === 'Secret') as Obj;
    expect(secret.metadata.annotations?.['helm.sh/hook']).toBe('test');
    expect(key?.valueFrom?.secretKeyRef).toEqual({
      name: secret.metadata.name,
      key: 'API_KEY',
      optional: true,
    });
    expect(Buffer.from(String(secret.data?.API_KEY), 'base64').toString()).toBe(
      'sxk_v1_demoDemoDemoDemoDemoDemoDemoDemo',
    );
    const extractorCm = ofKind(objs, 'ConfigMap').find((m) => component(m) === 'extractor');
    expect(extractorCm?.data?.YOUTUBE_BASE_URL).toBe('http://demo-platform:8080');
  });

  it('takes the key from a Secret the operator manages, and pulls the gateway image like the gateway', () => {
    const objs = render(path.join(chartDir, 'ci/production-values.yaml'), [
      '--set',
      'tests.smoke.videoUrl=https://youtu.be/F1xioXWb8CY',
      '--set',
      'tests.smoke.apiKeySecret.name=subx-smoke-key',
    ]);
    expect(smoke(objs).filter((o) => o.kind === 'Secret')).toEqual([]);
    const { spec } = testPod(objs);
    // Optional: a Secret made after the install leaves the Pod startable until it exists.
    expect(envOf(spec).get('SMOKE_API_KEY')?.valueFrom?.secretKeyRef).toEqual({
      name: 'subx-smoke-key',
      key: 'API_KEY',
      optional: true,
    });
    expect(envOf(spec).get('SMOKE_API_KEY_SOURCE')?.value).toBe('Secret subx-smoke-key, key API_KEY');
    expect(spec.imagePullSecrets).toEqual([{ name: 'registry-credentials' }]);
    expect(spec.containers[0]?.image).toBe('registry.example.com/platform/subx/gateway:1.0.0');
  });

  it('can be turned off, and refuses settings it cannot run', () => {
    const off = render(path.join(chartDir, 'ci/dev-values.yaml'), ['--set', 'tests.smoke.enabled=false']);
    expect(smoke(off)).toEqual([]);
    expect(
      off.filter((o) => o.metadata.annotations?.['helm.sh/hook']),
      'no hook left when the test is off',
    ).toEqual([]);
    expect(() =>
      render(path.join(chartDir, 'ci/dev-values.yaml'), [
        '--set',
        'tests.smoke.videoUrl=https://youtu.be/F1xioXWb8CY',
      ]),
    ).toThrow(/need an API key/);
    expect(() =>
      render(path.join(chartDir, 'ci/dev-values.yaml'), ['--set', 'components.gateway.enabled=false']),
    ).toThrow(/tests.smoke.enabled calls the gateway/);
    expect(() =>
      render(path.join(chartDir, 'ci/dev-values.yaml'), ['--set', 'tests.smoke.videoUrl=youtu.be/x']),
    ).toThrow(/videoUrl/);
  });
});

describe.skipIf(!helm)('helm test hook: the smoke calls against npm run demo', () => {
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
    expect(run.stdout).toMatch(/smoke: ok {3}GET \/openapi.json: OpenAPI 3\.\d/);
    expect(run.stdout).toMatch(/smoke: ok {3}POST \/api\/v1\/extract without a key: 401 UNAUTHORIZED/);
    expect(run.stdout).toMatch(/smoke: ok {3}POST \/api\/v1\/extract F1xioXWb8CY: \d+ segments, language en/);
    expect(run.stdout).toMatch(/smoke: ok {3}POST \/api\/v1\/batch: 2\/2 videos extracted/);
    expect(run.stdout).toContain('smoke: PASS (5 checks)');
    expect(run.stdout + run.stderr).not.toContain(demo.env.SMOKE_API_KEY);
  });

  it('with the default values, runs the checks that need no key', async () => {
    const { env } = renderSmokeTest(path.join(chartDir, 'ci/dev-values.yaml'));
    const run = await runScript(scriptFile, { ...env, SMOKE_GATEWAY_URL: gatewayUrl });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('smoke: PASS (3 checks)');
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
      SMOKE_GATEWAY_URL: `http://127.0.0.1:${await freePort()}`,
      SMOKE_READY_WAIT_MS: '1500',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/smoke: FAIL health\/ready: not ready within 1500 ms; last: .*ECONNREFUSED/);
    expect(run.ms).toBeLessThan(10_000);
  });

  it('refuses a timeout that is not a number instead of waiting without bound', async () => {
    const run = await runScript(scriptFile, {
      ...demo.env,
      SMOKE_GATEWAY_URL: gatewayUrl,
      SMOKE_READY_WAIT_MS: '1m',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('smoke: FAIL config: SMOKE_READY_WAIT_MS must be milliseconds, got "1m"');
  });

  it('skips the keyed checks, saying why, while their Secret does not exist yet', async () => {
    // What the Pod sees when the optional Secret reference finds nothing: no SMOKE_API_KEY at all.
    const { SMOKE_API_KEY: _key, ...withoutKey } = demo.env;
    const run = await runScript(scriptFile, {
      ...withoutKey,
      SMOKE_GATEWAY_URL: gatewayUrl,
      SMOKE_API_KEY_SOURCE: 'Secret subx-cluster-smoke-key, key API_KEY',
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(
      'smoke: skip extract: no API key in Secret subx-cluster-smoke-key, key API_KEY (create it, then run helm test again)',
    );
    expect(run.stdout).toContain('smoke: skip batch: no API key');
    expect(run.stdout).toContain('smoke: PASS (3 checks, 2 skipped)');
  });
});
