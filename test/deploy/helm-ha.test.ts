// High availability of ci/production-values.yaml: replicas (or an HPA floor) of at least 2, a
// PodDisruptionBudget and a spread over nodes per component, and NetworkPolicies that restrict
// egress to DNS and what each component needs. The default install keeps open egress and no
// node spread.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
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

type Peer = {
  podSelector?: { matchLabels?: Record<string, string> };
  namespaceSelector?: { matchLabels?: Record<string, string> };
  ipBlock?: { cidr: string; except?: string[] };
};
type EgressRule = { to?: Peer[]; ports?: { port: number | string; protocol?: string }[] };
type PolicySpec = { policyTypes: string[]; egress?: EgressRule[] };
type Spread = {
  topologyKey: string;
  whenUnsatisfiable: string;
  labelSelector?: { matchLabels?: Record<string, string> };
};

const production = (): Obj[] => render(path.join(chartDir, 'ci/production-values.yaml'));
const byComponent = (objs: Obj[], kind: string): Map<string | undefined, Obj> =>
  new Map(ofKind(objs, kind).map((o) => [component(o), o]));
const egressOf = (objs: Obj[]): Map<string | undefined, PolicySpec> =>
  new Map(ofKind(objs, 'NetworkPolicy').map((p) => [component(p), p.spec as PolicySpec]));
const ports = (rule: EgressRule): string[] =>
  (rule.ports ?? []).map((p) => `${p.protocol ?? 'TCP'}/${p.port}`);
const podTargets = (spec: PolicySpec): string[] =>
  (spec.egress ?? [])
    .flatMap((r) => r.to ?? [])
    .map((t) => t.podSelector?.matchLabels?.['app.kubernetes.io/component'])
    .filter((c): c is string => !!c && ALL_COMPONENTS.includes(c))
    .sort();

describe.skipIf(!helm)('helm chart deploy/helm/subx: high availability (ci/production-values.yaml)', () => {
  recordHelm();

  it('runs every component with at least 2 replicas, or an HPA with minReplicas >= 2', () => {
    const objs = production();
    const hpas = byComponent(objs, 'HorizontalPodAutoscaler');
    const deployments = ofKind(objs, 'Deployment');
    expect(deployments.map((d) => component(d)).sort()).toEqual([...ALL_COMPONENTS].sort());
    for (const d of deployments) {
      const replicas = (d.spec as { replicas?: number }).replicas;
      const hpa = hpas.get(component(d))?.spec as { minReplicas?: number } | undefined;
      const floor = replicas ?? hpa?.minReplicas ?? 1;
      expect(floor, `${component(d)} replicas`).toBeGreaterThanOrEqual(2);
    }
  });

  it('gives every component a PodDisruptionBudget that leaves at most one pod down', () => {
    const pdbs = byComponent(production(), 'PodDisruptionBudget');
    for (const name of ALL_COMPONENTS) {
      const spec = pdbs.get(name)?.spec as
        | {
            minAvailable?: number;
            maxUnavailable?: number;
            selector: { matchLabels: Record<string, string> };
          }
        | undefined;
      expect(spec, `${name} PDB`).toBeDefined();
      expect(spec?.selector.matchLabels['app.kubernetes.io/component']).toBe(name);
      expect(spec?.maxUnavailable === 1 || spec?.minAvailable === 1, `${name} PDB budget`).toBe(true);
    }
  });

  it('spreads every component over nodes, best effort, selecting its own pods', () => {
    for (const d of ofKind(production(), 'Deployment')) {
      const spread = (podSpec(d) as { topologySpreadConstraints?: Spread[] }).topologySpreadConstraints ?? [];
      const byHost = spread.find((s) => s.topologyKey === 'kubernetes.io/hostname');
      expect(byHost, `${component(d)} spread`).toBeDefined();
      expect(byHost?.whenUnsatisfiable).toBe('ScheduleAnyway');
      expect(byHost?.labelSelector?.matchLabels?.['app.kubernetes.io/component']).toBe(component(d));
    }
  });

  it('restricts egress of every component: DNS allowed, never everything', () => {
    const policies = egressOf(production());
    expect([...policies.keys()].sort()).toEqual([...ALL_COMPONENTS].sort());
    for (const [name, spec] of policies) {
      expect(spec.policyTypes, `${name}`).toContain('Egress');
      const rules = spec.egress ?? [];
      expect(rules.length, `${name} egress rules`).toBeGreaterThan(0);
      const dns = rules.find((r) => ports(r).includes('UDP/53'));
      expect(dns && ports(dns), `${name} DNS`).toEqual(['UDP/53', 'TCP/53']);
      for (const rule of rules) {
        // A rule without ports allows every port; an ipBlock of everything without exceptions
        // reaches the cluster's own addresses.
        expect(rule.ports?.length, `${name} rule without ports`).toBeGreaterThan(0);
        for (const t of rule.to ?? []) {
          if (t.ipBlock && ['0.0.0.0/0', '::/0'].includes(t.ipBlock.cidr)) {
            expect(t.ipBlock.except?.length, `${name} open ipBlock`).toBeGreaterThan(0);
            expect(ports(rule), `${name} open ipBlock ports`).not.toContain('TCP/53');
          }
        }
      }
    }
  });

  it('lets each component reach only its peers among the chart components', () => {
    const policies = egressOf(production());
    const targets = (name: string): string[] => podTargets(policies.get(name) as PolicySpec);
    expect(targets('gateway')).toEqual(['ai', 'billing', 'comments', 'extractor', 'jobs']);
    expect(targets('ai')).toEqual(['comments', 'extractor']);
    expect(targets('jobs')).toEqual(['extractor']);
    expect(targets('dashboard')).toEqual(['gateway']);
    for (const name of ['extractor', 'comments', 'billing']) expect(targets(name)).toEqual([]);
    const dashboardToGateway = policies
      .get('dashboard')
      ?.egress?.find(
        (r) => r.to?.[0]?.podSelector?.matchLabels?.['app.kubernetes.io/component'] === 'gateway',
      );
    expect(dashboardToGateway && ports(dashboardToGateway)).toEqual(['TCP/8080', 'TCP/8081']);
  });

  it('allows public HTTPS to the components that call the platform, the model API or webhooks only', () => {
    const policies = egressOf(production());
    const publicHttps = (name: string): boolean =>
      (policies.get(name)?.egress ?? []).some(
        (r) => ports(r).includes('TCP/443') && (r.to ?? []).some((t) => t.ipBlock?.cidr === '0.0.0.0/0'),
      );
    expect(ALL_COMPONENTS.filter(publicHttps).sort()).toEqual([
      'ai',
      'comments',
      'extractor',
      'gateway',
      'jobs',
    ]);
    const kafka = (name: string): boolean =>
      (policies.get(name)?.egress ?? []).some((r) => ports(r).includes('TCP/9093'));
    expect(ALL_COMPONENTS.filter(kafka).sort()).toEqual(['billing', 'extractor', 'gateway', 'jobs']);
    const mongo = (name: string): boolean =>
      (policies.get(name)?.egress ?? []).some((r) => ports(r).includes('TCP/27017'));
    expect(ALL_COMPONENTS.filter(mongo).sort()).toEqual(['billing', 'dashboard', 'gateway', 'jobs']);
  });

  it('leaves the default install as before: ingress-only policies, no node spread', () => {
    const objs = render(path.join(chartDir, 'ci/dev-values.yaml'));
    for (const p of ofKind(objs, 'NetworkPolicy')) {
      expect((p.spec as PolicySpec).policyTypes).toEqual(['Ingress']);
      expect((p.spec as PolicySpec).egress).toBeUndefined();
    }
    for (const d of ofKind(objs, 'Deployment')) {
      expect(
        (podSpec(d) as { topologySpreadConstraints?: Spread[] }).topologySpreadConstraints,
      ).toBeUndefined();
    }
  });

  it('refuses an egress destination without ports (it would allow every port)', () => {
    expect(() =>
      render(path.join(chartDir, 'ci/production-values.yaml'), [
        '--set-json',
        'networkPolicy.egress.redis={"to":[],"ports":[]}',
      ]),
    ).toThrow(/ports/);
  });
});
