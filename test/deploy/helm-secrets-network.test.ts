// The chart's Secret (kept out of ConfigMaps, referenced by name) and its NetworkPolicy shape.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify as stringifyYaml } from 'yaml';
import {
  ALL_COMPONENTS,
  KUBE_VERSION,
  type Obj,
  chartDir,
  component,
  enabledComponents,
  helm,
  ofKind,
  podSpec,
  render,
  recordHelm,
} from './helm-chart.ts';

describe.skipIf(!helm)('helm chart deploy/helm/subx: secrets and NetworkPolicy', () => {
  recordHelm();
  describe('secrets', () => {
    it('creates the Secret from values, base64-encoded, and references it by name', () => {
      const objs = render(path.join(chartDir, 'ci/dev-values.yaml'));
      const [secret] = ofKind(objs, 'Secret');
      expect(secret?.data?.ADMIN_TOKEN).toBe(
        Buffer.from('ci-admin-token-0123456789abcdef0123').toString('base64'),
      );
      const gateway = ofKind(objs, 'Deployment').find((d) => component(d) === 'gateway') as Obj;
      const ref = podSpec(gateway).containers[0]?.env?.find((e) => e.name === 'ADMIN_TOKEN');
      expect(ref?.valueFrom?.secretKeyRef?.name).toBe(secret?.metadata.name);
    });

    it('with existingSecret, creates no Secret and references the existing one', () => {
      const objs = render(path.join(chartDir, 'ci/production-values.yaml'));
      expect(ofKind(objs, 'Secret')).toEqual([]);
      for (const d of ofKind(objs, 'Deployment')) {
        for (const e of podSpec(d).containers[0]?.env ?? []) {
          expect(e.valueFrom?.secretKeyRef?.name).toBe('subx-runtime');
        }
      }
    });

    it('refuses to render without ADMIN_TOKEN or an existing Secret', () => {
      expect(() =>
        execFileSync(helm as string, ['template', 'subx', chartDir, '--kube-version', KUBE_VERSION], {
          encoding: 'utf8',
          stdio: 'pipe',
        }),
      ).toThrow(/ADMIN_TOKEN is required/);
    });

    it('refuses an admin token the gateway would reject (under 32 characters)', () => {
      expect(() =>
        render(path.join(chartDir, 'ci/dev-values.yaml'), ['--set', 'secrets.values.ADMIN_TOKEN=too-short']),
      ).toThrow(/ADMIN_TOKEN/);
    });

    it('puts no plain hash of secret values in pod annotations (keyed with the pepper)', () => {
      const annotation = (objs: Obj[]) =>
        (
          ofKind(objs, 'Deployment')[0]?.spec as {
            template: { metadata: { annotations: Record<string, string> } };
          }
        ).template.metadata.annotations['checksum/secrets'];
      const values = path.join(chartDir, 'ci/dev-values.yaml');
      const objs = render(values);
      const secret = ofKind(objs, 'Secret')[0] as Obj;
      const plain = Object.fromEntries(
        Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
      );
      const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
      const got = annotation(objs);
      expect(got).toMatch(/^[0-9a-f]{64}$/);
      // Not the hash of the values (whatever their serialisation), nor of any one value.
      const yaml = stringifyYaml(plain);
      for (const text of [yaml, yaml.trimEnd()]) expect(got).not.toBe(sha256(text));
      for (const v of Object.values(plain)) expect(got).not.toBe(sha256(v));
      // Still changes when a secret changes (the pods roll), e.g. a rotated Redis password.
      expect(
        annotation(render(values, ['--set', 'secrets.values.REDIS_URL=redis://:rotated@redis:6379'])),
      ).not.toBe(got);
    });

    it('refuses to render the dashboard without SMTP unless mails to the log are chosen explicitly', () => {
      const bare = [
        '--set',
        'secrets.values.ADMIN_TOKEN=ci-admin-token-0123456789abcdef0123',
        '--set',
        'secrets.values.API_KEY_PEPPER=ci-pepper-0123456789abcdef-0123456789',
      ];
      const values = path.join(chartDir, 'ci/minimal-values.yaml');
      const withDashboard = [...bare, '--set', 'components.dashboard.enabled=true'];
      expect(() => render(values, withDashboard)).toThrow(
        /components\.dashboard is enabled without SMTP: set secrets\.values\.SMTP_URL .*MAIL_TO_LOG/,
      );
      const withSmtp = render(values, [...withDashboard, '--set', 'secrets.values.SMTP_URL=smtp://mail:587']);
      expect(enabledComponents(withSmtp)).toContain('dashboard');
      const dashboardEnv = (objs: Obj[]) =>
        ofKind(objs, 'ConfigMap').find((o) => component(o) === 'dashboard')!.data as Record<string, string>;
      expect(dashboardEnv(withSmtp).NODE_ENV).toBe('production');
      const optedIn = render(values, [
        ...withDashboard,
        '--set-string',
        'components.dashboard.env.MAIL_TO_LOG=true',
      ]);
      expect(dashboardEnv(optedIn).MAIL_TO_LOG).toBe('true');
      // Without the dashboard, no SMTP is needed.
      expect(() => render(values, bare)).not.toThrow();
    });

    it('refuses an API key pepper the gateway would reject (under 32 characters)', () => {
      expect(() =>
        render(path.join(chartDir, 'ci/dev-values.yaml'), [
          '--set',
          'secrets.values.API_KEY_PEPPER=too-short',
        ]),
      ).toThrow(/API_KEY_PEPPER/);
    });

    it('refuses a secret key placed in plain env', () => {
      expect(() =>
        render(path.join(chartDir, 'ci/dev-values.yaml'), [
          '--set',
          'components.ai.env.OPENAI_API_KEY=sk-oops',
        ]),
      ).toThrow(/OPENAI_API_KEY is a secret key/);
    });
  });

  describe('NetworkPolicy', () => {
    it('is on by default, absent when disabled', () => {
      expect(ofKind(render(path.join(chartDir, 'ci/dev-values.yaml')), 'NetworkPolicy')).not.toEqual([]);
      expect(
        ofKind(
          render(path.join(chartDir, 'ci/dev-values.yaml'), ['--set', 'networkPolicy.enabled=false']),
          'NetworkPolicy',
        ),
      ).toEqual([]);
    });

    it('lets anyone reach the gateway, only the dashboard its admin port, only their callers the internal services', () => {
      const objs = render(path.join(chartDir, 'ci/dev-values.yaml'));
      type Rule = {
        from?: { podSelector?: { matchLabels: Record<string, string> } }[];
        ports?: { port: string | number }[];
      };
      const policies = new Map(
        ofKind(objs, 'NetworkPolicy').map((p) => [
          component(p),
          p.spec as {
            podSelector: { matchLabels: Record<string, string> };
            ingress: Rule[];
            policyTypes: string[];
          },
        ]),
      );
      expect([...policies.keys()].sort()).toEqual([...ALL_COMPONENTS].sort());
      const callers = (name: string): string[] =>
        (policies.get(name)?.ingress ?? [])
          .flatMap((r) => r.from ?? [])
          .map((f) => f.podSelector?.matchLabels['app.kubernetes.io/component'] ?? '?')
          .sort();

      const gateway = policies.get('gateway');
      expect(gateway?.policyTypes).toEqual(['Ingress']);
      expect(gateway?.ingress).toHaveLength(2);
      expect(gateway?.ingress[0]?.from).toBeUndefined(); // no `from`: any source
      expect(gateway?.ingress[0]?.ports).toEqual([{ port: 'http', protocol: 'TCP' }]); // never `admin`
      expect(gateway?.ingress[1]?.ports).toEqual([{ port: 'admin', protocol: 'TCP' }]);
      expect(callers('gateway')).toEqual(['dashboard']);
      expect(callers('extractor')).toEqual(['ai', 'gateway', 'jobs']);
      expect(callers('comments')).toEqual(['ai', 'gateway']);
      expect(callers('ai')).toEqual(['gateway']);
      expect(callers('billing')).toEqual(['gateway']);
      expect(callers('jobs')).toEqual(['gateway']);
      for (const [name, spec] of policies) {
        expect(spec.podSelector.matchLabels['app.kubernetes.io/component'], String(name)).toBe(name);
      }
    });
  });
});
