// The chart's metrics: ports, ServiceMonitor and the Prometheus rules.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import {
  ALL_COMPONENTS,
  type Obj,
  chartDir,
  component,
  helm,
  ofKind,
  podSpec,
  render,
  recordHelm,
} from './helm-chart.ts';

describe.skipIf(!helm)('helm chart deploy/helm/subx: metrics', () => {
  recordHelm();
  describe('metrics', () => {
    type Port = { name: string; port?: number; containerPort?: number; targetPort?: string | number };
    type Rule = {
      alert?: string;
      record?: string;
      labels?: Record<string, string>;
      annotations?: Record<string, string>;
    };
    type Group = { name: string; rules: Rule[] };
    const servicePorts = (svc: Obj): Port[] => (svc.spec as { ports: Port[] }).ports;

    it('gives every component METRICS_PORT, a container port and a Service port named metrics', () => {
      const objs = render(path.join(chartDir, 'ci/dev-values.yaml'));
      for (const d of ofKind(objs, 'Deployment')) {
        const name = component(d);
        const cm = ofKind(objs, 'ConfigMap').find((m) => m.metadata.name === d.metadata.name);
        expect(cm?.data?.METRICS_PORT, name).toBe('9464');
        expect(podSpec(d).containers[0]?.ports, name).toContainEqual({
          name: 'metrics',
          containerPort: 9464,
          protocol: 'TCP',
        });
        const svc = ofKind(objs, 'Service').find((x) => x.metadata.name === d.metadata.name) as Obj;
        expect(
          servicePorts(svc).find((p) => p.name === 'metrics'),
          name,
        ).toMatchObject({
          port: 9464,
          targetPort: 'metrics',
        });
      }
      // The Prometheus Operator objects need its CRDs: off unless asked for.
      expect(ofKind(objs, 'ServiceMonitor')).toEqual([]);
      expect(ofKind(objs, 'PrometheusRule')).toEqual([]);
    });

    it('with metrics.enabled=false, turns METRICS_PORT off and exposes no metrics port', () => {
      const objs = render(path.join(chartDir, 'ci/minimal-values.yaml'));
      // Every component's ConfigMap (not the helm test's script).
      for (const cm of ofKind(objs, 'ConfigMap').filter((m) => component(m) !== 'smoke-test')) {
        expect(cm.data?.METRICS_PORT, cm.metadata.name).toBe('off');
      }
      for (const svc of ofKind(objs, 'Service')) {
        expect(servicePorts(svc).map((p) => p.name)).not.toContain('metrics');
      }
      expect(() =>
        render(path.join(chartDir, 'ci/minimal-values.yaml'), [
          '--set',
          'metrics.serviceMonitor.enabled=true',
        ]),
      ).toThrow(/needs metrics.enabled/);
    });

    it('renders a ServiceMonitor that selects every component Service on its metrics port', () => {
      const objs = render(path.join(chartDir, 'ci/production-values.yaml'));
      const [monitor, ...others] = ofKind(objs, 'ServiceMonitor');
      expect(others).toEqual([]);
      expect(monitor?.apiVersion).toBe('monitoring.coreos.com/v1');
      expect(monitor?.metadata.labels?.release).toBe('kube-prometheus-stack');
      const spec = monitor?.spec as {
        selector: {
          matchLabels: Record<string, string>;
          matchExpressions?: { key: string; operator: string }[];
        };
        endpoints: { port: string; path: string; interval: string }[];
      };
      expect(spec.endpoints).toEqual([
        expect.objectContaining({ port: 'metrics', path: '/metrics', interval: '15s' }),
      ]);
      const selected = ofKind(objs, 'Service').filter(
        (svc) =>
          Object.entries(spec.selector.matchLabels).every(([k, v]) => svc.metadata.labels?.[k] === v) &&
          (spec.selector.matchExpressions ?? []).every(
            (e) => e.operator === 'DoesNotExist' && !(e.key in (svc.metadata.labels ?? {})),
          ),
      );
      expect(selected.map(component).sort()).toEqual([...ALL_COMPONENTS].sort());
      for (const svc of selected) expect(servicePorts(svc).map((p) => p.name)).toContain('metrics');
    });

    it('renders the rule file as a PrometheusRule, runbook links rebased, every alert with severity and runbook', () => {
      const objs = render(path.join(chartDir, 'ci/production-values.yaml'));
      const [rule] = ofKind(objs, 'PrometheusRule');
      const groups = (rule?.spec as { groups: Group[] }).groups;
      const source = parseYaml(readFileSync(path.join(chartDir, 'files/prometheus-rules.yaml'), 'utf8')) as {
        groups: Group[];
      };
      const base = 'https://docs.subx.example.com/operations';
      const rebased = JSON.parse(
        JSON.stringify(source.groups).replaceAll(
          'https://github.com/subx/subx/blob/main/docs/operations.md',
          base,
        ),
      ) as Group[];
      expect(groups).toEqual(rebased);
      const alerts = groups.flatMap((g) => g.rules).filter((r) => r.alert);
      expect(alerts.map((a) => a.alert).sort()).toEqual(
        [
          'SubxAvailabilityBudgetBurnFast',
          'SubxAvailabilityBudgetBurnSlow',
          'SubxBillingConsumerStalled',
          'SubxDeadLettersGrowing',
          'SubxEgressQuarantined',
          'SubxEventConsumerRestarting',
          'SubxGateway5xxRatioHigh',
          'SubxKafkaConsumerLagHigh',
          'SubxLatencyBudgetBurn',
          'SubxOutboxBacklogOld',
          'SubxPoTokenProviderFailing',
          'SubxPoTokenProviderSlow',
          'SubxUpstreamBlockedRatioHigh',
          'SubxUpstreamCircuitOpen',
          'SubxUpstreamClientRejected',
        ].sort(),
      );
      for (const a of alerts) {
        expect(['critical', 'warning'], a.alert).toContain(a.labels?.severity);
        expect(a.annotations?.runbook_url, a.alert).toBe(`${base}#${a.alert!.toLowerCase()}`);
      }
    });
  });
});
