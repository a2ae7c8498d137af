// Renders deploy/helm/subx with every example values file (deploy/helm/subx/ci/*.yaml) through a
// real `helm template` and checks what an operator relies on: probes, resources, non-root pods,
// autoscaling, disruption budgets, the Ingress, the dashboard's wiring, disabled components and the
// client identities ConfigMap.
// Secrets and the NetworkPolicy, the admin listener and TLS, and metrics have files of their own
// (helm-*.test.ts); helm-chart.ts finds helm and renders.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ALL_COMPONENTS,
  GRPC_COMPONENTS,
  type Container,
  type Obj,
  type PodSpec,
  SECRET_KEYS,
  chartDir,
  component,
  enabledComponents,
  examples,
  ofKind,
  podSpec,
  render,
  helm,
  recordHelm,
} from './helm-chart.ts';

/** Components off by default that an example may turn on (ci/keda-values.yaml). */
const OPTIONAL_COMPONENTS = ['speech'];
const GRPC_PORTS: Record<string, number> = GRPC_COMPONENTS;

describe.skipIf(!helm)('helm chart deploy/helm/subx', () => {
  recordHelm();
  it('has example values to render', () => {
    expect(examples).toEqual(expect.arrayContaining(['dev-values.yaml', 'production-values.yaml']));
  });

  describe.each(examples)('rendered with ci/%s', (file) => {
    // Rendered in beforeAll, not at collection time: collection also runs when the suite is skipped.
    let objs: Obj[] = [];
    let deployments: Obj[] = [];
    let grpcTls = false;
    beforeAll(() => {
      objs = render(path.join(chartDir, 'ci', file));
      deployments = ofKind(objs, 'Deployment');
      // The values turn gRPC TLS on: the extractor's pod gets the certificate's variables.
      grpcTls = objs.some((o) => o.kind === 'ConfigMap' && JSON.stringify(o).includes('GRPC_TLS_CERT_FILE'));
    });

    it('renders a Deployment and a Service per enabled component, from the same template', () => {
      expect(deployments.length).toBeGreaterThan(0);
      for (const d of deployments) {
        const name = component(d);
        expect(name && [...ALL_COMPONENTS, ...OPTIONAL_COMPONENTS].includes(name)).toBe(true);
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

        const grpcPort = GRPC_PORTS[name];
        for (const probe of [c.livenessProbe, c.readinessProbe, c.startupProbe]) {
          expect(probe, `${name} probe`).toBeDefined();
          if (grpcPort !== undefined && grpcTls) {
            // The kubelet's gRPC probe speaks plaintext only: under TLS the port is checked.
            expect(probe?.tcpSocket?.port, name).toBe(grpcPort);
            expect(probe?.grpc, name).toBeUndefined();
          } else if (grpcPort !== undefined) {
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
      // KEDA's ScaledObjects (helm-keda.test.ts) own the replicas of what they scale the same way.
      const scaled = ofKind(objs, 'ScaledObject');
      for (const autoscaler of [...hpas, ...scaled]) {
        const target = (autoscaler.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name;
        const d = deployments.find((x) => x.metadata.name === target);
        expect(d, `${autoscaler.kind} ${autoscaler.metadata.name} target`).toBeDefined();
        expect((d?.spec as { replicas?: number }).replicas).toBeUndefined();
      }
      // minimal: a one-replica gateway; cluster: CI's single-node cluster has no metrics-server
      if (file !== 'minimal-values.yaml' && file !== 'cluster-values.yaml') {
        const byKeda = scaled.map(component);
        const enabled = enabledComponents(objs);
        expect(hpas.map(component).sort()).toEqual(
          ['extractor', 'gateway', 'jobs'].filter((n) => enabled.includes(n) && !byKeda.includes(n)),
        );
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
      // Least privilege: only the gateway and the job service get the pepper; the admin token goes
      // to the gateway and the dashboard (which calls the admin API with it), nowhere else.
      for (const d of deployments.filter((x) => component(x) !== 'gateway')) {
        const names = (podSpec(d).containers[0]?.env ?? []).map((e) => e.name);
        if (component(d) !== 'dashboard') expect(names, component(d)).not.toContain('ADMIN_TOKEN');
        if (component(d) !== 'jobs') expect(names, component(d)).not.toContain('API_KEY_PEPPER');
      }
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

  it('gives the extractor, and it alone, a disk for transcription audio where TRANSCRIBE_SPOOL_DIR points', () => {
    const objs = render(path.join(chartDir, 'ci/dev-values.yaml'));
    for (const d of ofKind(objs, 'Deployment')) {
      const name = component(d) as string;
      const pod = podSpec(d) as PodSpec & {
        volumes?: { name: string; emptyDir?: { sizeLimit?: string } }[];
      };
      const mounts = (
        pod.containers[0] as Container & { volumeMounts?: { name: string; mountPath: string }[] }
      ).volumeMounts;
      const cm = ofKind(objs, 'ConfigMap').find((m) => m.metadata.name === d.metadata.name);
      const spool = pod.volumes?.find((v) => v.name === 'spool');
      if (name === 'extractor') {
        expect(spool?.emptyDir?.sizeLimit).toBe('1Gi');
        expect(mounts?.find((m) => m.name === 'spool')?.mountPath).toBe('/var/spool/subx');
        expect(cm?.data?.TRANSCRIBE_SPOOL_DIR).toBe('/var/spool/subx');
      } else {
        expect(spool, name).toBeUndefined();
        expect(cm?.data?.TRANSCRIBE_SPOOL_DIR, name).toBeUndefined();
      }
    }
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

  it('runs the job service as its own Deployment behind the gateway, on the gateway’s pepper and engines', () => {
    const objs = render(path.join(chartDir, 'ci/dev-values.yaml'));
    const byComponent = (kind: string, name: string) => ofKind(objs, kind).find((o) => component(o) === name);
    const jobs = byComponent('Deployment', 'jobs') as Obj;
    const [c] = podSpec(jobs).containers;
    expect(c?.image).toMatch(/^subx\/jobs:/);
    expect(c?.ports?.find((p) => p.name === 'grpc')?.containerPort).toBe(50055);
    // Two runners at least, so a job whose pod goes away resumes on the other after its lease.
    const hpa = byComponent('HorizontalPodAutoscaler', 'jobs')?.spec as { minReplicas: number } | undefined;
    expect(hpa?.minReplicas).toBeGreaterThanOrEqual(2);
    expect(byComponent('PodDisruptionBudget', 'jobs')).toBeDefined();

    const service = byComponent('Service', 'jobs') as Obj;
    const gatewayEnv = byComponent('ConfigMap', 'gateway')?.data ?? {};
    expect(gatewayEnv.JOBS_GRPC_ADDR).toBe(`${service.metadata.name}:50055`);
    const jobsEnv = byComponent('ConfigMap', 'jobs')?.data ?? {};
    expect(jobsEnv).toMatchObject({
      GRPC_PORT: '50055',
      EXTRACTOR_GRPC_ADDR: gatewayEnv.EXTRACTOR_GRPC_ADDR,
      KAFKA_BROKERS: gatewayEnv.KAFKA_BROKERS,
      MONGO_DB: gatewayEnv.MONGO_DB,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false',
    });
    // The webhooks left the gateway with the jobs: their settings are the job service's.
    expect(gatewayEnv).not.toHaveProperty('WEBHOOK_ALLOW_PRIVATE_NETWORKS');

    // The same Secret keys as the gateway's for what both read; no admin token.
    const refs = new Map((c?.env ?? []).map((e) => [e.name, e.valueFrom?.secretKeyRef]));
    expect([...refs.keys()].sort()).toEqual([
      'API_KEY_PEPPER',
      'API_KEY_PEPPER_PREVIOUS',
      'MONGO_URL',
      'REDIS_URL',
    ]);
    expect(refs.get('API_KEY_PEPPER')).toEqual({ name: 'subx-secrets', key: 'API_KEY_PEPPER' });
    expect(refs.get('API_KEY_PEPPER_PREVIOUS')?.optional).toBe(true);

    // What the chart renders passes the job service's own validation.
    const secret = ofKind(objs, 'Secret')[0] as Obj;
    const secretEnv = Object.fromEntries(
      [...refs].map(([name, ref]) => [
        name,
        Buffer.from(String(secret.data?.[ref?.key ?? '']), 'base64').toString(),
      ]),
    );
    return import('../../services/jobs/src/config.ts').then(({ loadJobServiceConfig }) => {
      const config = loadJobServiceConfig({ ...jobsEnv, ...secretEnv });
      expect(config.GRPC_PORT).toBe(50055);
      expect(config.API_KEY_PEPPER).toBe(secretEnv.API_KEY_PEPPER);
      expect(config.API_KEY_PEPPER_PREVIOUS).toBeUndefined();
    });
  });

  it('refuses to render the job service without the pepper it seals webhook secrets under', () => {
    expect(() =>
      render(path.join(chartDir, 'ci/dev-values.yaml'), [
        '--set',
        'components.gateway.enabled=false',
        '--set',
        'components.dashboard.enabled=false',
        '--set',
        'tests.smoke.enabled=false',
        '--set',
        'secrets.values.API_KEY_PEPPER=',
      ]),
    ).toThrow(/API_KEY_PEPPER is required/);
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
});
