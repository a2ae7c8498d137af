// The strict schema validation of scripts/validate-deploy.sh (scripts/kube-schemas/kube-validate.sh:
// kubeconform -strict against the API schemas of Kubernetes releases and the Prometheus-operator
// and KEDA CRDs) accepts the chart as it is and rejects copies of it with an unknown field, a wrong
// type, a malformed quantity, an unknown field in a custom resource (a ServiceMonitor, a
// ScaledObject, a TriggerAuthentication), a trigger setting KEDA cannot read, a kind Kubernetes
// does not know, or a declared Kubernetes floor that is not validated. Needs helm and kubeconform in
// ~/.cache/subx-tools/bin (validate-deploy.sh installs both); skipped loudly without them, failing in CI.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { recordRequirement } from '@subx/testing/engines';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const chartDir = path.join(repoRoot, 'deploy/helm/subx');
const script = path.join(repoRoot, 'scripts/kube-schemas/kube-validate.sh');
const toolsBin = path.join(process.env.SUBX_TOOLS_DIR ?? path.join(homedir(), '.cache/subx-tools'), 'bin');
const helm = [process.env.HELM, path.join(toolsBin, 'helm')].find((c): c is string => !!c && existsSync(c));
const ready = !!helm && existsSync(path.join(toolsBin, 'kubeconform'));

if (!ready) {
  const message =
    'helm or kubeconform missing in ~/.cache/subx-tools/bin: run `bash scripts/validate-deploy.sh`';
  if (process.env.CI) throw new Error(message);
  console.warn(
    `\n# SKIPPING test/deploy/kube-schema-validate.test.ts: ${message}. In CI this suite fails.\n`,
  );
}

const workDir = mkdtempSync(path.join(tmpdir(), 'subx-kube-validate-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

let copies = 0;
/** A copy of the chart with `edit` applied to one of its files (path relative to the chart). */
function chartCopy(file: string, edit: (source: string) => string): string {
  const copy = path.join(workDir, `chart-${++copies}`);
  cpSync(chartDir, copy, { recursive: true });
  const target = path.join(copy, file);
  const before = existsSync(target) ? readFileSync(target, 'utf8') : '';
  const after = edit(before);
  expect(after, `the edit of ${file} changed nothing`).not.toBe(before);
  writeFileSync(target, after);
  return copy;
}

function validate(chart: string): { status: number | null; output: string } {
  const result = spawnSync('bash', [script, 'chart', chart, path.join(workDir, `out-${++copies}`)], {
    encoding: 'utf8',
    env: { ...process.env, HELM: helm },
    timeout: 90_000,
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe.skipIf(!ready)('strict Kubernetes schema validation of the chart (kube-validate.sh)', () => {
  recordRequirement({
    kind: 'tool',
    name: 'kubeconform',
    ran: ready,
    reason: 'helm or kubeconform not found in ~/.cache/subx-tools/bin',
    enable: 'bash scripts/validate-deploy.sh',
  });

  it('accepts the chart as it is, for every Kubernetes release validated', () => {
    const { status, output } = validate(chartDir);
    expect(status, output).toBe(0);
    const summaries = output.match(
      /Summary: \d+ resources found in \d+ files - Valid: \d+, Invalid: 0, Errors: 0, Skipped: 0/g,
    );
    expect(summaries, output).toHaveLength(2);
    expect(output).toContain('Kubernetes 1.37.2');
  });

  it('rejects an unknown field in a Deployment', () => {
    const copy = chartCopy('templates/deployment.yaml', (s) =>
      s.replace('  revisionHistoryLimit: 5\n', '  revisionHistoryLimit: 5\n  replicaz: 2\n'),
    );
    const { status, output } = validate(copy);
    expect(status).toBe(1);
    expect(output).toMatch(
      /Deployment subx-gateway is invalid.*additional properties 'replicaz' not allowed/,
    );
    expect(output).toContain('do not validate strictly');
  });

  it('rejects a field of the wrong type', () => {
    const copy = chartCopy('templates/deployment.yaml', (s) =>
      s.replace('  revisionHistoryLimit: 5\n', '  revisionHistoryLimit: five\n'),
    );
    const { status, output } = validate(copy);
    expect(status).toBe(1);
    expect(output).toMatch(/at '\/spec\/revisionHistoryLimit': got string, want integer/);
  });

  it('rejects a resource quantity Kubernetes cannot parse', () => {
    const copy = chartCopy('values.yaml', (s) =>
      s.replace('limits: { memory: 512Mi }', 'limits: { memory: lots }'),
    );
    const { status, output } = validate(copy);
    expect(status).toBe(1);
    expect(output).toMatch(/limits\/memory': 'lots' does not match pattern/);
  });

  it('rejects an unknown field in a Prometheus-operator custom resource and in its metadata', () => {
    const copy = chartCopy('templates/servicemonitor.yaml', (s) =>
      s
        .replace(/^( +)interval: /m, '$1intervall: 15s\n$1interval: ')
        .replace('\n  labels:\n', '\n  labelz: {}\n  labels:\n'),
    );
    const { status, output } = validate(copy);
    expect(status).toBe(1);
    expect(output).toMatch(/ServiceMonitor subx is invalid.*additional properties 'intervall' not allowed/);
    expect(output).toMatch(
      /ServiceMonitor subx is invalid.*at '\/metadata': additional properties 'labelz' not allowed/,
    );
  });

  // ci/keda-values.yaml renders the ScaledObjects and both TriggerAuthentications.
  it('rejects an unknown field in a KEDA ScaledObject and in a TriggerAuthentication', () => {
    const copy = chartCopy('templates/keda.yaml', (s) =>
      s
        .replace('  cooldownPeriod: {{', '  coolDownPeriod: 60\n  cooldownPeriod: {{')
        .replace('    - parameter: bearerToken\n', '    - parameter: bearerToken\n      optional: true\n'),
    );
    const { status, output } = validate(copy);
    expect(status).toBe(1);
    expect(output).toMatch(
      /ScaledObject subx-extractor is invalid.*additional properties 'coolDownPeriod' not allowed/,
    );
    expect(output).toMatch(
      /TriggerAuthentication subx-keda-prometheus is invalid.*additional properties 'optional' not allowed/,
    );
  });

  it('rejects a trigger setting that is not a string (KEDA reads metadata as strings only)', () => {
    const copy = chartCopy('templates/keda.yaml', (s) =>
      s.replace('lagThreshold: {{ .threshold | toString | quote }}', 'lagThreshold: {{ .threshold }}'),
    );
    const { status, output } = validate(copy);
    expect(status).toBe(1);
    expect(output).toMatch(/ScaledObject subx-extractor is invalid.*lagThreshold'?: got number, want string/);
  });

  it('rejects a kind it has no schema for instead of skipping it', () => {
    const copy = chartCopy(
      'templates/made-up.yaml',
      () => 'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n',
    );
    const { status, output } = validate(copy);
    expect(status).toBe(1);
    expect(output).toContain('could not find schema for Widget');
  });

  it('refuses a chart whose declared Kubernetes floor is not the oldest release validated', () => {
    const copy = chartCopy('Chart.yaml', (s) => s.replace(/^kubeVersion: .*$/m, "kubeVersion: '>=1.27.0-0'"));
    const { status, output } = validate(copy);
    expect(status).toBe(1);
    expect(output).toContain('declares kubeVersion >=1.27, but the oldest release validated is 1.30.14');
  });
});
