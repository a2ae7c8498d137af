// Renders deploy/helm/subx with every example values file (deploy/helm/subx/ci/*.yaml) through a
// real `helm template` and checks what an operator relies on: probes, resources, non-root pods,
// autoscaling, disruption budgets, secrets kept out of ConfigMaps, and the NetworkPolicy shape.
// helm comes from $HELM, PATH, or ~/.cache/subx-tools/bin (scripts/validate-deploy.sh installs it
// there). Without helm the suite is skipped loudly, except in CI, where it fails.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, parseAllDocuments, stringify as stringifyYaml } from 'yaml';
import { recordRequirement } from '@subx/testing/engines';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const chartDir = path.join(repoRoot, 'deploy/helm/subx');
const KUBE_VERSION = '1.33.0';

const GRPC_COMPONENTS: Record<string, number> = {
  extractor: 50051,
  comments: 50052,
  ai: 50053,
  billing: 50054,
};
const ALL_COMPONENTS = ['gateway', 'dashboard', ...Object.keys(GRPC_COMPONENTS)];
const SECRET_KEYS = [
  'ADMIN_TOKEN',
  'API_KEY_PEPPER',
  'OPENAI_API_KEY',
  'YOUTUBE_PROXIES',
  'SMTP_URL',
  'REDIS_URL',
  'MONGO_URL',
];

function findHelm(): string | undefined {
  const candidates = [
    process.env.HELM,
    ...(process.env.PATH ?? '').split(path.delimiter).map((dir) => path.join(dir, 'helm')),
    path.join(process.env.SUBX_TOOLS_DIR ?? path.join(homedir(), '.cache/subx-tools'), 'bin/helm'),
  ];
  return candidates.find((c): c is string => !!c && existsSync(c));
}

const helm = findHelm();
if (!helm) {
  if (process.env.CI) {
    throw new Error(
      'helm not found (HELM, PATH, ~/.cache/subx-tools/bin): run scripts/validate-deploy.sh first',
    );
  }
  console.warn(
    '\n#############################################################################\n' +
      '# SKIPPING test/deploy/helm-render.test.ts: helm not found.                 #\n' +
      '# Run `bash scripts/validate-deploy.sh` once (installs a pinned helm), or    #\n' +
      '# set HELM=/path/to/helm. In CI (CI set) this suite fails instead.           #\n' +
      '#############################################################################\n',
  );
}

// Loose shapes of the Kubernetes objects this test reads.
type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  data?: Record<string, string>;
  spec?: Record<string, unknown>;
};
type Probe = { grpc?: { port: number }; httpGet?: { path: string; port: string | number } };
type Container = {
  name: string;
  ports?: { name: string; containerPort: number }[];
  envFrom?: { configMapRef?: { name: string } }[];
  env?: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
  }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: {
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    runAsNonRoot?: boolean;
  };
};
type PodSpec = {
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  containers: Container[];
  terminationGracePeriodSeconds?: number;
};

function render(valuesFile: string, extraArgs: string[] = []): Obj[] {
  const out = execFileSync(
    helm as string,
    [
      'template',
      'subx',
      chartDir,
      '--namespace',
      'subx',
      '--kube-version',
      KUBE_VERSION,
      '-f',
      valuesFile,
      ...extraArgs,
    ],
    { encoding: 'utf8', maxBuffer: 32 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return parseAllDocuments(out)
    .map((doc) => doc.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
}

const component = (o: Obj): string | undefined => o.metadata.labels?.['app.kubernetes.io/component'];
const ofKind = (objs: Obj[], kind: string): Obj[] => objs.filter((o) => o.kind === kind);
const podSpec = (d: Obj): PodSpec => (d.spec as { template: { spec: PodSpec } }).template.spec;
const enabledComponents = (objs: Obj[]): string[] =>
  ofKind(objs, 'Deployment')
    .map((d) => component(d) ?? '')
    .sort();

const examples = readdirSync(path.join(chartDir, 'ci')).filter((f) => f.endsWith('.yaml'));

describe.skipIf(!helm)('helm chart deploy/helm/subx', () => {
  recordRequirement({
    kind: 'tool',
    name: 'helm',
    ran: !!helm,
    reason: 'helm not found (HELM, PATH, ~/.cache/subx-tools/bin)',
    enable: 'bash scripts/validate-deploy.sh',
  });
  it('has example values to render', () => {
    expect(examples).toEqual(expect.arrayContaining(['dev-values.yaml', 'production-values.yaml']));
  });

  describe.each(examples)('rendered with ci/%s', (file) => {
    // Rendered in beforeAll, not at collection time: collection also runs when the suite is skipped.
    let objs: Obj[] = [];
    let deployments: Obj[] = [];
    beforeAll(() => {
      objs = render(path.join(chartDir, 'ci', file));
      deployments = ofKind(objs, 'Deployment');
    });

    it('renders a Deployment and a Service per enabled component, from the same template', () => {
      expect(deployments.length).toBeGreaterThan(0);
      for (const d of deployments) {
        const name = component(d);
        expect(name && ALL_COMPONENTS.includes(name)).toBe(true);
        const svc = ofKind(objs, 'Service').find((s) => s.metadata.name === d.metadata.name);
        expect(svc, `Service for ${name}`).toBeDefined();
      }
    });

    it('gives every container probes of the right kind, resources and a non-root security context', () => {
      for (const d of deployments) {
        const name = component(d) as string;
        const pod = podSpec(d);
        expect(pod.securityContext?.runAsNonRoot, name).toBe(true);
        expect(pod.securityContext?.runAsUser, name).not.toBe(0);
        const [c] = pod.containers;
        expect(c, name).toBeDefined();
        if (!c) continue;
        expect(c.securityContext?.allowPrivilegeEscalation, name).toBe(false);
        expect(c.securityContext?.readOnlyRootFilesystem, name).toBe(true);
        expect(c.resources?.requests?.cpu, name).toBeTruthy();
        expect(c.resources?.requests?.memory, name).toBeTruthy();
        expect(c.resources?.limits?.memory, name).toBeTruthy();

        const grpcPort = GRPC_COMPONENTS[name];
        for (const probe of [c.livenessProbe, c.readinessProbe, c.startupProbe]) {
          expect(probe, `${name} probe`).toBeDefined();
          if (grpcPort !== undefined) {
            expect(probe?.grpc?.port, name).toBe(grpcPort);
            expect(probe?.httpGet, name).toBeUndefined();
          } else {
            expect(probe?.httpGet?.port, name).toBe('http');
            expect(probe?.grpc, name).toBeUndefined();
          }
        }
        if (grpcPort === undefined) {
          expect(c.livenessProbe?.httpGet?.path).toBe('/health/live');
          expect(c.readinessProbe?.httpGet?.path).toBe('/health/ready');
        }
        // The kubelet must not SIGKILL a pod that is still inside SHUTDOWN_TIMEOUT_MS.
        const cm = ofKind(objs, 'ConfigMap').find((m) => m.metadata.name === d.metadata.name);
        const shutdownMs = Number(cm?.data?.SHUTDOWN_TIMEOUT_MS);
        expect(shutdownMs, name).toBeGreaterThan(0);
        expect((pod.terminationGracePeriodSeconds ?? 30) * 1000, name).toBeGreaterThan(shutdownMs);
      }
    });

    it('wires gRPC peers to the rendered Services and ports', () => {
      const services = new Map(
        ofKind(objs, 'Service').map((s) => {
          const ports = (s.spec as { ports: { port: number }[] }).ports;
          return [s.metadata.name, ports[0]?.port];
        }),
      );
      for (const cm of ofKind(objs, 'ConfigMap')) {
        for (const [key, value] of Object.entries(cm.data ?? {})) {
          if (!key.endsWith('_GRPC_ADDR')) continue;
          const [host, port] = value.split(':');
          expect(services.get(host ?? ''), `${cm.metadata.name} ${key}=${value}`).toBe(Number(port));
        }
      }
    });

    it('scales gateway and extractor with an HPA (when enabled) and never fixes their replicas then', () => {
      const hpas = ofKind(objs, 'HorizontalPodAutoscaler');
      for (const hpa of hpas) {
        const target = (hpa.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name;
        const d = deployments.find((x) => x.metadata.name === target);
        expect(d, `HPA ${hpa.metadata.name} target`).toBeDefined();
        expect((d?.spec as { replicas?: number }).replicas).toBeUndefined();
      }
      // minimal: a one-replica gateway; cluster: CI's single-node cluster has no metrics-server
      if (file !== 'minimal-values.yaml' && file !== 'cluster-values.yaml') {
        expect(hpas.map(component).sort()).toEqual(['extractor', 'gateway']);
      }
    });

    it('has a PodDisruptionBudget selecting each component', () => {
      const pdbs = ofKind(objs, 'PodDisruptionBudget');
      expect(pdbs.map(component).sort()).toEqual(enabledComponents(objs));
      for (const pdb of pdbs) {
        const sel = (pdb.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels;
        expect(sel['app.kubernetes.io/component']).toBe(component(pdb));
      }
    });

    it('keeps secret keys out of ConfigMaps and takes them from the Secret', () => {
      for (const cm of ofKind(objs, 'ConfigMap')) {
        for (const key of SECRET_KEYS) expect(cm.data ?? {}, cm.metadata.name).not.toHaveProperty(key);
      }
      const gateway = deployments.find((d) => component(d) === 'gateway');
      const env = podSpec(gateway as Obj).containers[0]?.env ?? [];
      for (const key of ['ADMIN_TOKEN', 'API_KEY_PEPPER', 'REDIS_URL', 'MONGO_URL']) {
        const entry = env.find((e) => e.name === key);
        expect(entry?.valueFrom?.secretKeyRef?.key, key).toBe(key);
        expect(entry?.value, key).toBeUndefined();
      }
      // Least privilege: only the gateway gets the pepper; the admin token goes to the gateway and
      // the dashboard (which calls the admin API with it), nowhere else.
      for (const d of deployments.filter((x) => component(x) !== 'gateway')) {
        const names = (podSpec(d).containers[0]?.env ?? []).map((e) => e.name);
        if (component(d) !== 'dashboard') expect(names, component(d)).not.toContain('ADMIN_TOKEN');
        expect(names, component(d)).not.toContain('API_KEY_PEPPER');
      }
    });
  });

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

    it('lets anyone reach the gateway, only the dashboard its admin port, only gateway/ai the internal services', () => {
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
      expect(callers('extractor')).toEqual(['ai', 'gateway']);
      expect(callers('comments')).toEqual(['ai', 'gateway']);
      expect(callers('ai')).toEqual(['gateway']);
      expect(callers('billing')).toEqual(['gateway']);
      for (const [name, spec] of policies) {
        expect(spec.podSelector.matchLabels['app.kubernetes.io/component'], String(name)).toBe(name);
      }
    });
  });

  describe('admin listener, trusted proxies, internal TLS', () => {
    it('gives the admin API a Service of its own that the ingress never routes; the dashboard calls it', () => {
      const objs = render(path.join(chartDir, 'ci/production-values.yaml'));
      const services = ofKind(objs, 'Service');
      const portsOf = (o: Obj) => (o.spec as { ports: { name: string; port: number }[] }).ports;
      const publicSvc = services.find((s) => component(s) === 'gateway') as Obj;
      const adminSvc = services.find((s) => component(s) === 'gateway-admin') as Obj;
      expect(portsOf(publicSvc).map((p) => p.name)).not.toContain('admin');
      expect(portsOf(adminSvc)).toEqual([expect.objectContaining({ name: 'admin', port: 8081 })]);
      expect(
        (adminSvc.spec as { selector: Record<string, string> }).selector['app.kubernetes.io/component'],
      ).toBe('gateway');
      const backends = JSON.stringify(ofKind(objs, 'Ingress').map((i) => i.spec));
      expect(backends).not.toContain(adminSvc.metadata.name);
      expect(() =>
        render(path.join(chartDir, 'ci/production-values.yaml'), [
          '--set',
          'ingress.hosts[0].component=gateway-admin',
        ]),
      ).toThrow(/not an enabled http component/);

      const cm = (name: string) => ofKind(objs, 'ConfigMap').find((m) => component(m) === name)?.data ?? {};
      expect(cm('gateway')).toMatchObject({ ADMIN_PORT: '8081', ADMIN_HOST: '0.0.0.0' });
      expect(cm('dashboard').GATEWAY_ADMIN_URL).toBe(`http://${adminSvc.metadata.name}:8081`);
      const gateway = ofKind(objs, 'Deployment').find((d) => component(d) === 'gateway') as Obj;
      expect(podSpec(gateway).containers[0]?.ports?.map((p) => p.name)).toContain('admin');
    });

    it('sets TRUST_PROXY on the HTTP components, in a form the services accept', async () => {
      const objs = render(path.join(chartDir, 'ci/dev-values.yaml'));
      const cm = (name: string) => ofKind(objs, 'ConfigMap').find((m) => component(m) === name)?.data ?? {};
      expect(cm('gateway').TRUST_PROXY).toBe('uniquelocal');
      expect(cm('dashboard').TRUST_PROXY).toBe('uniquelocal');
      expect(cm('extractor')).not.toHaveProperty('TRUST_PROXY');
      const { loadConfig } = await import('../../services/gateway/src/config.ts');
      expect(loadConfig(cm('gateway')).TRUST_PROXY).toEqual(['uniquelocal']);
      expect(() => render(path.join(chartDir, 'ci/dev-values.yaml'), ['--set', 'trustProxy=true'])).toThrow(
        /trustProxy/,
      );
    });

    it('configures Kafka TLS and SASL from values, the password from the Secret', async () => {
      const objs = render(path.join(chartDir, 'ci/dev-values.yaml'), [
        '--set',
        'infra.kafka.tls.enabled=true',
        '--set',
        'infra.kafka.tls.caSecret=kafka-ca',
        '--set',
        'infra.kafka.sasl.mechanism=scram-sha-512',
        '--set',
        'infra.kafka.sasl.username=subx',
        '--set',
        'secrets.values.KAFKA_SASL_PASSWORD=kafka-secret',
      ]);
      for (const d of ofKind(objs, 'Deployment')) {
        const name = component(d) as string;
        const cm = ofKind(objs, 'ConfigMap').find((m) => m.metadata.name === d.metadata.name)?.data ?? {};
        const env = new Map((podSpec(d).containers[0]?.env ?? []).map((e) => [e.name, e]));
        const usesKafka = 'KAFKA_BROKERS' in cm;
        expect(usesKafka, name).toBe(['gateway', 'extractor', 'billing'].includes(name));
        if (!usesKafka) {
          expect(env.has('KAFKA_SASL_PASSWORD'), name).toBe(false);
          continue;
        }
        expect(cm, name).toMatchObject({
          KAFKA_SSL: 'true',
          KAFKA_SSL_CA_FILE: '/etc/subx/kafka-ca/ca.crt',
          KAFKA_SASL_MECHANISM: 'scram-sha-512',
          KAFKA_SASL_USERNAME: 'subx',
        });
        expect(cm, name).not.toHaveProperty('KAFKA_SASL_PASSWORD');
        expect(env.get('KAFKA_SASL_PASSWORD')?.valueFrom?.secretKeyRef?.key, name).toBe(
          'KAFKA_SASL_PASSWORD',
        );
        const volumes = (podSpec(d) as { volumes?: { name: string; secret?: { secretName: string } }[] })
          .volumes;
        expect(volumes?.find((v) => v.name === 'kafka-ca')?.secret?.secretName, name).toBe('kafka-ca');
      }
      // The rendered variables are what the services read.
      const { loadConfig } = await import('../../services/gateway/src/config.ts');
      const gatewayCm = ofKind(objs, 'ConfigMap').find((m) => component(m) === 'gateway')?.data ?? {};
      expect(loadConfig({ ...gatewayCm, KAFKA_SASL_PASSWORD: 'x' })).toMatchObject({
        KAFKA_SSL: true,
        KAFKA_SASL_MECHANISM: 'scram-sha-512',
      });
      expect(() =>
        render(path.join(chartDir, 'ci/dev-values.yaml'), [
          '--set',
          'infra.kafka.sasl.mechanism=plain',
          '--set',
          'infra.kafka.sasl.username=u',
        ]),
      ).toThrow(/KAFKA_SASL_PASSWORD is required/);
    });

    it('configures gRPC over mutual TLS from a TLS Secret', () => {
      const objs = render(path.join(chartDir, 'ci/dev-values.yaml'), [
        '--set',
        'grpcTls.enabled=true',
        '--set',
        'grpcTls.secretName=subx-grpc-tls',
      ]);
      const cm = (name: string) => ofKind(objs, 'ConfigMap').find((m) => component(m) === name)?.data ?? {};
      for (const name of Object.keys(GRPC_COMPONENTS)) {
        expect(cm(name), name).toMatchObject({
          GRPC_TLS_CERT_FILE: '/etc/subx/grpc-tls/tls.crt',
          GRPC_TLS_KEY_FILE: '/etc/subx/grpc-tls/tls.key',
          GRPC_TLS_CLIENT_CA_FILE: '/etc/subx/grpc-tls/ca.crt',
        });
      }
      // The callers: TLS with the CA, presenting the certificate.
      for (const name of ['gateway', 'ai']) {
        expect(cm(name), name).toMatchObject({
          GRPC_TLS: 'true',
          GRPC_TLS_CA_FILE: '/etc/subx/grpc-tls/ca.crt',
        });
      }
      expect(cm('dashboard')).not.toHaveProperty('GRPC_TLS_CERT_FILE');
      const extractor = ofKind(objs, 'Deployment').find((d) => component(d) === 'extractor') as Obj;
      const volumes = (
        podSpec(extractor) as { volumes?: { name: string; secret?: { secretName: string } }[] }
      ).volumes;
      expect(volumes?.find((v) => v.name === 'grpc-tls')?.secret?.secretName).toBe('subx-grpc-tls');
      // The kubelet's gRPC probe cannot speak TLS: the probes check the port instead.
      const probe = podSpec(extractor).containers[0]?.readinessProbe as {
        tcpSocket?: { port: number };
        grpc?: unknown;
      };
      expect(probe.tcpSocket?.port).toBe(50051);
      expect(probe.grpc).toBeUndefined();
      expect(() =>
        render(path.join(chartDir, 'ci/dev-values.yaml'), ['--set', 'grpcTls.enabled=true']),
      ).toThrow(/grpcTls.secretName is required/);
    });
  });

  it('renders an Ingress to the gateway Service only when enabled', () => {
    const off = render(path.join(chartDir, 'ci/dev-values.yaml'));
    expect(ofKind(off, 'Ingress')).toEqual([]);
    const on = render(path.join(chartDir, 'ci/production-values.yaml'));
    const [ingress] = ofKind(on, 'Ingress');
    const gatewaySvc = ofKind(on, 'Service').find((s) => component(s) === 'gateway');
    const rules = (
      ingress?.spec as { rules: { http: { paths: { backend: { service: { name: string } } }[] } }[] }
    ).rules;
    expect(rules[0]?.http.paths[0]?.backend.service.name).toBe(gatewaySvc?.metadata.name);
  });

  it('wires the dashboard to the gateway Service, its own port variable, and its secrets', () => {
    const objs = render(path.join(chartDir, 'ci/dev-values.yaml'));
    const byComponent = (kind: string, name: string) => ofKind(objs, kind).find((o) => component(o) === name);
    const gatewaySvc = byComponent('Service', 'gateway') as Obj;
    const gatewayPort = (gatewaySvc.spec as { ports: { port: number }[] }).ports[0]?.port;
    const cm = byComponent('ConfigMap', 'dashboard') as Obj;
    expect(cm.data?.GATEWAY_URL).toBe(`http://${gatewaySvc.metadata.name}:${gatewayPort}`);
    expect(cm.data?.DASHBOARD_PORT).toBe('8090');
    expect(cm.data).not.toHaveProperty('PORT');
    const dashboard = byComponent('Deployment', 'dashboard') as Obj;
    const [c] = podSpec(dashboard).containers;
    expect(c?.ports?.[0]?.containerPort).toBe(8090);
    const env = new Map((c?.env ?? []).map((e) => [e.name, e]));
    for (const key of ['ADMIN_TOKEN', 'REDIS_URL', 'MONGO_URL']) {
      expect(env.get(key)?.valueFrom?.secretKeyRef?.key, key).toBe(key);
    }
    expect(env.get('SMTP_URL')?.valueFrom?.secretKeyRef?.optional).toBe(true);
    expect(env.has('API_KEY_PEPPER')).toBe(false);
    // The chart's own config and Secret pass the dashboard's validation.
    const secret = ofKind(objs, 'Secret')[0] as Obj;
    const adminToken = Buffer.from(String(secret.data?.ADMIN_TOKEN), 'base64').toString();
    return import('../../services/dashboard/src/config.ts').then(({ loadDashboardConfig }) => {
      const config = loadDashboardConfig({ ...cm.data, ADMIN_TOKEN: adminToken });
      expect(config.DASHBOARD_PORT).toBe(8090);
    });
  });

  it('routes an ingress host to the dashboard when it says so, and refuses unknown targets', () => {
    const on = render(path.join(chartDir, 'ci/production-values.yaml'));
    const [ingress] = ofKind(on, 'Ingress');
    const rules = (
      ingress?.spec as {
        rules: {
          host: string;
          http: { paths: { backend: { service: { name: string; port: { name: string } } } }[] };
        }[];
      }
    ).rules;
    const dashboardSvc = ofKind(on, 'Service').find((s) => component(s) === 'dashboard');
    const app = rules.find((r) => r.host === 'app.subx.example.com');
    expect(app?.http.paths[0]?.backend.service).toEqual({
      name: dashboardSvc?.metadata.name,
      port: { name: 'http' },
    });
    expect(() =>
      render(path.join(chartDir, 'ci/production-values.yaml'), [
        '--set',
        'ingress.hosts[0].component=billing',
      ]),
    ).toThrow(/not an enabled http component/);
  });

  it('drops disabled components and the peers that pointed at them', () => {
    const objs = render(path.join(chartDir, 'ci/minimal-values.yaml'));
    expect(enabledComponents(objs)).toEqual(['extractor', 'gateway']);
    const gatewayCm = ofKind(objs, 'ConfigMap').find((m) => component(m) === 'gateway');
    expect(Object.keys(gatewayCm?.data ?? {}).filter((k) => k.endsWith('_GRPC_ADDR'))).toEqual([
      'EXTRACTOR_GRPC_ADDR',
    ]);
  });

  describe('client identities (youtubeClients)', () => {
    const prod = () => path.join(chartDir, 'ci/production-values.yaml');
    const identities = { order: ['ANDROID', 'IOS'], clients: { IOS: { version: '21.03.1' } } };

    it('off by default: no identities ConfigMap, no file, no mount', () => {
      const objs = render(prod());
      expect(objs.find((o) => o.metadata.name === 'subx-youtube-clients')).toBeUndefined();
      for (const cm of ofKind(objs, 'ConfigMap'))
        expect(cm.data ?? {}).not.toHaveProperty('YOUTUBE_CLIENTS_FILE');
    });

    it('set: one ConfigMap, mounted as a directory into the platform-facing components only, outside the config checksum', () => {
      const objs = render(prod(), ['--set-json', `youtubeClients=${JSON.stringify(identities)}`]);
      const cm = objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'subx-youtube-clients');
      expect(JSON.parse(cm?.data?.['clients.json'] ?? '{}')).toEqual(identities);
      const file = '/etc/subx/youtube-clients/clients.json';
      for (const d of ofKind(objs, 'Deployment')) {
        const name = component(d) ?? '';
        const spec = podSpec(d) as PodSpec & {
          volumes?: { name: string; configMap?: { name: string } }[];
          containers: (Container & {
            volumeMounts?: { name: string; mountPath: string; subPath?: string }[];
          })[];
        };
        const env =
          objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name === `subx-${name}`)?.data ?? {};
        const mount = spec.containers[0]?.volumeMounts?.find((m) => m.name === 'youtube-clients');
        if (name === 'extractor' || name === 'comments') {
          expect(env.YOUTUBE_CLIENTS_FILE, name).toBe(file);
          // no subPath: a subPath mount never sees ConfigMap updates
          expect(mount, name).toEqual({
            name: 'youtube-clients',
            mountPath: '/etc/subx/youtube-clients',
            readOnly: true,
          });
          expect(spec.volumes?.find((v) => v.name === 'youtube-clients')?.configMap?.name).toBe(
            'subx-youtube-clients',
          );
        } else {
          expect(env.YOUTUBE_CLIENTS_FILE, name).toBeUndefined();
          expect(mount, name).toBeUndefined();
        }
      }
      // a new client version changes the ConfigMap only: the pods are not rolled
      const bumped = render(prod(), [
        '--set-json',
        `youtubeClients=${JSON.stringify({ ...identities, clients: { IOS: { version: '21.04.0' } } })}`,
      ]);
      const checksums = (list: Obj[]) =>
        ofKind(list, 'Deployment').map(
          (d) =>
            (d.spec as { template: { metadata: { annotations: Record<string, string> } } }).template.metadata
              .annotations['checksum/config'],
        );
      expect(checksums(bumped)).toEqual(checksums(objs));
    });

    it('refuses identities set twice (env.YOUTUBE_CLIENTS and youtubeClients)', () => {
      expect(() =>
        render(prod(), [
          '--set-json',
          `youtubeClients=${JSON.stringify(identities)}`,
          '--set-json',
          `components.extractor.env.YOUTUBE_CLIENTS=${JSON.stringify('{"order":["IOS"]}')}`,
        ]),
      ).toThrow(/set the identities in one place/);
    });
  });

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
