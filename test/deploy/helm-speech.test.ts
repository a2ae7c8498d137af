// The chart's speech engine (components.speech, switched on by `speech.enabled`): off by default;
// on, a Deployment of the subx/speech image with HTTP probes on its health routes, metrics like the
// other components, a grace period that covers its drain, reachable only from the extractor, whose
// TRANSCRIBE_BASE_URL points at it; the documented GPU values render.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type Obj, chartDir, component, helm, ofKind, podSpec, recordHelm, render } from './helm-chart.ts';

const DEV = path.join(chartDir, 'ci/dev-values.yaml');
const toolsBin = path.join(process.env.SUBX_TOOLS_DIR ?? path.join(homedir(), '.cache/subx-tools'), 'bin');
const kubeconform = existsSync(path.join(toolsBin, 'kubeconform'));
const validate = fileURLToPath(new URL('../../scripts/kube-schemas/kube-validate.sh', import.meta.url));
type Rule = {
  from?: { podSelector?: { matchLabels?: Record<string, string> } }[];
  to?: { podSelector?: { matchLabels?: Record<string, string> } }[];
  ports?: { port: number | string }[];
};
const policy = (objs: Obj[], name: string) =>
  ofKind(objs, 'NetworkPolicy').find((p) => component(p) === name)!.spec as {
    ingress: Rule[];
    egress?: Rule[];
  };
const configOf = (objs: Obj[], name: string) =>
  ofKind(objs, 'ConfigMap').find((m) => m.metadata.name === `subx-${name}`)?.data ?? {};
const peerOf = (rule: Rule) =>
  (rule.from ?? rule.to)?.map((p) => p.podSelector?.matchLabels?.['app.kubernetes.io/component']);

describe.skipIf(!helm)('helm chart deploy/helm/subx: the speech engine', () => {
  recordHelm();

  it('is off by default: no speech objects, the extractor has no TRANSCRIBE_BASE_URL', () => {
    const objs = render(DEV);
    expect(objs.filter((o) => component(o) === 'speech')).toEqual([]);
    expect(configOf(objs, 'extractor').TRANSCRIBE_BASE_URL).toBeUndefined();
  });

  it('speech.enabled deploys subx/speech with health probes, metrics and a grace period over its drain', () => {
    const objs = render(DEV, ['--set', 'speech.enabled=true']);
    const deployment = ofKind(objs, 'Deployment').find((d) => component(d) === 'speech')!;
    expect(deployment.metadata.name).toBe('subx-speech');
    const spec = podSpec(deployment);
    const [container] = spec.containers;
    expect(container!.image).toMatch(/^subx\/speech:/);
    expect(container!.ports).toEqual([
      { name: 'http', containerPort: 8000, protocol: 'TCP' },
      { name: 'metrics', containerPort: 9464, protocol: 'TCP' },
    ]);
    const probes = container as unknown as Record<
      string,
      { httpGet: { path: string; port: string }; failureThreshold: number }
    >;
    expect(probes.livenessProbe!.httpGet).toEqual({ path: '/health/live', port: 'http' });
    expect(probes.readinessProbe!.httpGet).toEqual({ path: '/health/ready', port: 'http' });
    // Loading the model: two minutes to start before the kubelet gives up.
    expect(probes.startupProbe!.failureThreshold * 2).toBeGreaterThanOrEqual(120);
    const config = configOf(objs, 'speech');
    expect(config).toMatchObject({
      STT_PORT: '8000',
      STT_HOST: '0.0.0.0',
      METRICS_PORT: '9464',
      STT_CPU_THREADS: '2',
    });
    // SIGTERM: readiness 503, the admitted transcriptions finish within STT_SHUTDOWN_TIMEOUT_S.
    expect(spec.terminationGracePeriodSeconds).toBeGreaterThan(Number(config.STT_SHUTDOWN_TIMEOUT_S));
    // CPU by default, under the same security contexts as every component.
    const resources = (
      container as unknown as {
        resources: { requests: Record<string, string>; limits: Record<string, string> };
      }
    ).resources;
    expect(resources.requests.cpu).toBe('2');
    expect(Object.keys(resources.limits)).toEqual(['memory']);
    expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
    const service = ofKind(objs, 'Service').find((s) => s.metadata.name === 'subx-speech')!;
    expect(
      (service.spec as { ports: { name: string; port: number }[] }).ports.map((p) => [p.name, p.port]),
    ).toEqual([
      ['http', 8000],
      ['metrics', 9464],
    ]);
  });

  it('points the extractor at it, unless the extractor names another endpoint', () => {
    expect(configOf(render(DEV, ['--set', 'speech.enabled=true']), 'extractor').TRANSCRIBE_BASE_URL).toBe(
      'http://subx-speech:8000/v1',
    );
    const own = render(DEV, [
      '--set',
      'speech.enabled=true',
      '--set',
      'components.extractor.env.TRANSCRIBE_BASE_URL=https://api.openai.com/v1',
    ]);
    expect(configOf(own, 'extractor').TRANSCRIBE_BASE_URL).toBe('https://api.openai.com/v1');
    // No other component is told about it.
    for (const name of ['gateway', 'comments', 'ai', 'billing', 'dashboard'])
      expect(configOf(own, name).TRANSCRIBE_BASE_URL, name).toBeUndefined();
  });

  it('is reachable from the extractor only, and reaches nothing but DNS', () => {
    const objs = render(DEV, ['--set', 'speech.enabled=true', '--set', 'networkPolicy.egress.enabled=true']);
    const speech = policy(objs, 'speech');
    expect(speech.ingress.map(peerOf)).toEqual([['extractor']]);
    expect(speech.ingress[0]!.ports).toEqual([{ port: 'http', protocol: 'TCP' }]);
    expect(speech.egress).toHaveLength(1); // DNS
    const extractor = policy(objs, 'extractor');
    expect(extractor.egress!.find((r) => peerOf(r)?.includes('speech'))?.ports).toEqual([
      { port: 8000, protocol: 'TCP' },
    ]);
    // The gateway stays public; the others do not reach the speech engine.
    expect(policy(objs, 'gateway').ingress[0]!.from).toBeUndefined();
    for (const name of ['gateway', 'comments', 'ai', 'billing', 'dashboard'])
      expect(
        policy(objs, name).egress!.some((r) => peerOf(r)?.includes('speech')),
        name,
      ).toBe(false);
  });

  // The strict Kubernetes schemas of scripts/validate-deploy.sh, on the chart with the speech engine
  // on, a GPU limit, egress rules and the ServiceMonitor (the examples of ci/ keep it off).
  it.skipIf(!kubeconform && !process.env.CI)('passes kubeconform -strict with the speech engine on', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'subx-speech-chart-'));
    try {
      const chart = path.join(dir, 'subx');
      cpSync(chartDir, chart, { recursive: true });
      for (const f of readdirSync(path.join(chart, 'ci'))) rmSync(path.join(chart, 'ci', f));
      writeFileSync(
        path.join(chart, 'ci/speech-values.yaml'),
        [
          'secrets: { values: { ADMIN_TOKEN: ci-admin-token-0123456789abcdef0123, API_KEY_PEPPER: ci-pepper-0123456789abcdef-0123456789 } }',
          "components: { dashboard: { env: { MAIL_TO_LOG: 'true' } }, speech: { resources: { limits: { memory: 2Gi, nvidia.com/gpu: 1 } } } }",
          'speech: { enabled: true }',
          'networkPolicy: { egress: { enabled: true } }',
          'metrics: { serviceMonitor: { enabled: true } }',
          '',
        ].join('\n'),
      );
      const run = spawnSync('bash', [validate, 'chart', chart, path.join(dir, 'out')], {
        encoding: 'utf8',
        env: { ...process.env, HELM: helm as string, PATH: `${toolsBin}:${process.env.PATH ?? ''}` },
        timeout: 120_000,
      });
      expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
      expect(run.stdout).toMatch(/Invalid: 0, Errors: 0/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('renders the documented GPU node values and the ServiceMonitor selects it', () => {
    const objs = render(DEV, [
      '--set',
      'speech.enabled=true',
      '--set',
      'components.speech.env.STT_DEVICE=cuda',
      '--set',
      'components.speech.env.STT_COMPUTE_TYPE=float16',
      '--set-string',
      'components.speech.resources.limits.nvidia\\.com/gpu=1',
      '--set-string',
      'components.speech.nodeSelector.nvidia\\.com/gpu\\.present=true',
      '--set',
      'metrics.serviceMonitor.enabled=true',
    ]);
    const deployment = ofKind(objs, 'Deployment').find((d) => component(d) === 'speech')!;
    const container = podSpec(deployment).containers[0] as unknown as {
      resources: { limits: Record<string, string> };
    };
    expect(container.resources.limits['nvidia.com/gpu']).toBe('1');
    expect(configOf(objs, 'speech')).toMatchObject({ STT_DEVICE: 'cuda', STT_COMPUTE_TYPE: 'float16' });
    const monitor = ofKind(objs, 'ServiceMonitor')[0]!;
    const labels = ofKind(objs, 'Service').find((s) => s.metadata.name === 'subx-speech')!.metadata.labels!;
    const selector = (monitor.spec as { selector: { matchLabels: Record<string, string> } }).selector
      .matchLabels;
    for (const [k, v] of Object.entries(selector)) expect(labels[k]).toBe(v);
  });
});
