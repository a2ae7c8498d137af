// The observability files against each other and against the code: the compose `observability`
// profile (Prometheus scraping every service, Grafana provisioned), and every series the alert rules
// and the dashboard query exists: `subx_*` names defined in service-kit's metrics, `subx:*` names
// recorded by the rules, Node.js process names present in a real scrape of the kit's registry.
// (promtool checks the rules' syntax and behaviour in scripts/validate-deploy.sh.)
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { collectProcessMetrics, scrape } from '@subx/service-kit';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const read = (file: string) => readFileSync(path.join(repoRoot, file), 'utf8');

type Service = {
  profiles?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
};
const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, Service> };
const APPS = ['ai', 'billing', 'comments', 'dashboard', 'extractor', 'gateway', 'jobs'];

type Rule = { record?: string; alert?: string; expr: string };
const rules = (
  parse(read('deploy/helm/subx/files/prometheus-rules.yaml')) as { groups: { rules: Rule[] }[] }
).groups.flatMap((g) => g.rules);
type Panel = { type: string; id: number; targets?: { expr: string }[]; datasource?: { uid: string } };
const dashboard = JSON.parse(read('deploy/grafana/dashboards/subx-overview.json')) as {
  uid: string;
  panels: Panel[];
};
const dashboardExprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));

/** Metric names an expression reads: its identifiers that name subx, Node.js or process series. */
function seriesIn(expr: string): string[] {
  const withoutStrings = expr.replace(/"[^"]*"/g, '""');
  const tokens = withoutStrings.match(/[a-zA-Z_:][a-zA-Z0-9_:]*/g) ?? [];
  return [...new Set(tokens.filter((t) => /subx[:_]|^nodejs_|^process_/.test(t)))];
}

describe('docker compose observability profile', () => {
  const enabled = (profiles: string[]) =>
    Object.entries(compose.services)
      .filter(([, s]) => s.profiles?.some((p) => profiles.includes(p)))
      .map(([name]) => name)
      .sort();

  it('adds Prometheus and Grafana and nothing else; apps alone does not start them', () => {
    expect(enabled(['observability'])).toEqual(['grafana', 'prometheus']);
    expect(enabled(['apps'])).not.toContain('prometheus');
  });

  it('every app serves /metrics on 9464 and Prometheus scrapes exactly them, with the rules loaded', () => {
    for (const app of APPS) expect(compose.services[app]?.environment?.METRICS_PORT, app).toBe('9464');
    const config = parse(read('deploy/prometheus/prometheus.yml')) as {
      rule_files: string[];
      scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
    };
    const subx = config.scrape_configs.find((c) => c.job_name === 'subx');
    expect(subx?.static_configs.flatMap((c) => c.targets).sort()).toEqual(APPS.map((a) => `${a}:9464`));
    const mounts = compose.services.prometheus?.volumes ?? [];
    for (const file of config.rule_files) {
      const mount = mounts.find((v) => v.split(':')[1] === file);
      expect(mount, file).toBe(
        './deploy/helm/subx/files/prometheus-rules.yaml:/etc/prometheus/rules/subx.rules.yaml:ro',
      );
    }
  });

  it('mounts files that exist and provisions the dashboard from the mounted folder', () => {
    for (const name of ['prometheus', 'grafana']) {
      for (const volume of compose.services[name]?.volumes ?? []) {
        const source = volume.split(':')[0]!;
        if (source.startsWith('./')) expect(existsSync(path.join(repoRoot, source)), volume).toBe(true);
      }
    }
    const provider = parse(read('deploy/grafana/provisioning/dashboards/subx.yaml')) as {
      providers: { options: { path: string } }[];
    };
    const dashboards = (compose.services.grafana?.volumes ?? []).find((v) =>
      v.startsWith('./deploy/grafana/dashboards:'),
    );
    expect(dashboards?.split(':')[1]).toBe(provider.providers[0]?.options.path);
    const home = compose.services.grafana?.environment?.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH ?? '';
    expect(existsSync(path.join(repoRoot, 'deploy/grafana/dashboards', path.basename(home)))).toBe(true);
  });
});

describe('rules and dashboard read series that exist', () => {
  const defined = new Set(
    readdirSync(path.join(repoRoot, 'packages/service-kit/src/metrics'))
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))
      .flatMap((file) =>
        [...read(`packages/service-kit/src/metrics/${file}`).matchAll(/'(subx_[a-z0-9_]+)'/g)].map(
          (m) => m[1],
        ),
      ),
  );
  const recorded = new Set(rules.flatMap((r) => (r.record ? [r.record] : [])));
  const histogramParts = (name: string) => name.replace(/_(bucket|count|sum)$/, '');

  it('subx_* series are defined by service-kit, subx:* series are recorded by the rules', () => {
    expect(defined.size).toBeGreaterThan(15);
    const exprs = [...rules.map((r) => r.expr), ...dashboardExprs];
    const unknown = exprs
      .flatMap(seriesIn)
      .filter((name) =>
        name.includes(':')
          ? !recorded.has(name)
          : name.startsWith('subx_') && !defined.has(histogramParts(name)),
      );
    expect(unknown).toEqual([]);
  });

  it('Node.js process series of the dashboard are in a real scrape', async () => {
    collectProcessMetrics();
    const text = await scrape();
    const missing = dashboardExprs
      .flatMap(seriesIn)
      .filter((name) => !name.startsWith('subx'))
      // Histograms have no samples before their first observation: their TYPE line is there.
      .filter((name) => !new RegExp(`^# TYPE ${name.replace(/_(bucket|count|sum)$/, '')} `, 'm').test(text));
    expect(missing).toEqual([]);
  });

  it('the dashboard has unique panel ids and queries through its datasource variable', () => {
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const panel of dashboard.panels.filter((p) => p.type !== 'row')) {
      expect(panel.datasource?.uid, String(panel.id)).toBe('${datasource}');
      expect(panel.targets?.length, String(panel.id)).toBeGreaterThan(0);
    }
  });
});
