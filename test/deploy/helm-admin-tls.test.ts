// The chart's admin listener, trusted proxies, internal gRPC TLS and its Kafka settings.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_KAFKA_TOPIC_RETENTION_MS } from '@subx/service-kit';
import {
  GRPC_COMPONENTS,
  type Obj,
  chartDir,
  component,
  ofKind,
  podSpec,
  render,
  helm,
  recordHelm,
} from './helm-chart.ts';

describe.skipIf(!helm)('helm chart deploy/helm/subx: admin listener, trusted proxies, internal TLS', () => {
  recordHelm();
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
        expect(usesKafka, name).toBe(['gateway', 'extractor', 'billing', 'jobs'].includes(name));
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

    it('sets KAFKA_TOPIC_RETENTION_MS on every component that uses Kafka, as the services read it', async () => {
      const kafkaUsers = ['billing', 'extractor', 'gateway', 'jobs'];
      const retentionOf = (objs: Obj[]) =>
        Object.fromEntries(
          ofKind(objs, 'ConfigMap')
            .filter((m) => m.data && 'KAFKA_BROKERS' in m.data)
            .map((m) => [component(m) ?? m.metadata.name, m.data?.KAFKA_TOPIC_RETENTION_MS]),
        );
      const defaults = render(path.join(chartDir, 'ci/dev-values.yaml'));
      expect(retentionOf(defaults)).toEqual(
        Object.fromEntries(kafkaUsers.map((name) => [name, String(DEFAULT_KAFKA_TOPIC_RETENTION_MS)])),
      );
      const noKafka = ofKind(defaults, 'ConfigMap').filter((m) => m.data && !('KAFKA_BROKERS' in m.data));
      expect(noKafka.length).toBeGreaterThan(0);
      for (const m of noKafka) expect(m.data, component(m)).not.toHaveProperty('KAFKA_TOPIC_RETENTION_MS');

      // 30 days: above 2^31, rendered as digits (no float notation) that the services accept.
      const month = render(path.join(chartDir, 'ci/dev-values.yaml'), [
        '--set',
        'infra.kafka.topicRetentionMs=2592000000',
      ]);
      expect(retentionOf(month)).toEqual(Object.fromEntries(kafkaUsers.map((name) => [name, '2592000000'])));
      const { loadConfig } = await import('../../services/gateway/src/config.ts');
      const gatewayCm = ofKind(month, 'ConfigMap').find((m) => component(m) === 'gateway')?.data ?? {};
      expect(loadConfig(gatewayCm).KAFKA_TOPIC_RETENTION_MS).toBe(2_592_000_000);
      // Less than an hour is refused by the values schema, as the services would refuse it.
      expect(() =>
        render(path.join(chartDir, 'ci/dev-values.yaml'), ['--set', 'infra.kafka.topicRetentionMs=604800']),
      ).toThrow(/topicRetentionMs/);
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
      for (const name of ['gateway', 'ai', 'jobs']) {
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
});
