// Queue-depth autoscaling with KEDA (autoscaling.keda.enabled): off by default, with the CPU HPAs
// of today; on, ScaledObjects for the extractor (consumer lag of its two worker groups, and CPU),
// the job service (its backlog) and the speech engine (transcriptions queued or running, down to
// zero replicas), none of them with a CPU HPA as well; TriggerAuthentications from Secrets when
// Kafka or Prometheus need credentials; a maxReplicaCount above the jobs topics' partitions refused;
// and the partition count the same in the chart, scripts/kafka-topics.sh and the docs.
// The strict schema validation of the ScaledObjects against KEDA's CRDs runs in
// scripts/validate-deploy.sh (ci/keda-values.yaml) and test/deploy/kube-schema-validate.test.ts.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  type Obj,
  chartDir,
  component,
  helm,
  KUBE_VERSION,
  ofKind,
  recordHelm,
  render,
} from './helm-chart.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const DEV = path.join(chartDir, 'ci/dev-values.yaml');
const KEDA = path.join(chartDir, 'ci/keda-values.yaml');
/** The three scalable workloads on (the job service is by default), with KEDA as asked. */
const ALL_ON = ['--set', 'speech.enabled=true'];
const KEDA_ON = [...ALL_ON, '--set', 'autoscaling.keda.enabled=true'];

type Trigger = {
  type: string;
  name?: string;
  metricType?: string;
  metadata: Record<string, string>;
  authenticationRef?: { name: string };
};
type ScaledObjectSpec = {
  scaleTargetRef: { apiVersion: string; kind: string; name: string };
  minReplicaCount: number;
  maxReplicaCount: number;
  pollingInterval: number;
  cooldownPeriod: number;
  triggers: Trigger[];
};
type AuthRef = { parameter: string; name: string; key: string };
type TriggerAuthenticationSpec = { secretTargetRef?: AuthRef[]; configMapTargetRef?: AuthRef[] };

const scaledObjects = (objs: Obj[]) => ofKind(objs, 'ScaledObject');
const scaledObject = (objs: Obj[], name: string) =>
  scaledObjects(objs).find((o) => component(o) === name)?.spec as ScaledObjectSpec;
const authentication = (objs: Obj[], name: string) =>
  ofKind(objs, 'TriggerAuthentication').find((o) => o.metadata.name === name)
    ?.spec as TriggerAuthenticationSpec;
const deployment = (objs: Obj[], name: string) =>
  ofKind(objs, 'Deployment').find((d) => component(d) === name)!.spec as { replicas?: number };
const configOf = (objs: Obj[], name: string) =>
  ofKind(objs, 'ConfigMap').find((m) => m.metadata.name === `subx-${name}`)?.data ?? {};

/** The error `helm template` fails with (stderr), or undefined when it renders. */
function renderError(valuesFile: string, extraArgs: string[]): string | undefined {
  try {
    execFileSync(
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
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 32 * 1024 * 1024 },
    );
    return undefined;
  } catch (err) {
    return String((err as { stderr?: string }).stderr ?? err);
  }
}

describe.skipIf(!helm)('helm chart deploy/helm/subx: queue-depth autoscaling with KEDA', () => {
  recordHelm();

  it('is off by default: no ScaledObject or TriggerAuthentication, the CPU HPAs as before', () => {
    const objs = render(DEV, ALL_ON);
    expect(scaledObjects(objs)).toEqual([]);
    expect(ofKind(objs, 'TriggerAuthentication')).toEqual([]);
    expect(ofKind(objs, 'HorizontalPodAutoscaler').map(component).sort()).toEqual([
      'extractor',
      'gateway',
      'jobs',
    ]);
    expect(deployment(objs, 'extractor').replicas).toBeUndefined();
    // The speech engine keeps its fixed replica count, and the extractor waits for nothing.
    expect(deployment(objs, 'speech').replicas).toBe(1);
    expect(configOf(objs, 'extractor').TRANSCRIBE_UNAVAILABLE_WAIT_MS).toBeUndefined();
  });

  it('on: a ScaledObject for the extractor, the job service and the speech engine, and no CPU HPA for them', () => {
    const objs = render(DEV, KEDA_ON);
    expect(scaledObjects(objs).map(component).sort()).toEqual(['extractor', 'jobs', 'speech']);
    for (const so of scaledObjects(objs)) {
      const spec = so.spec as ScaledObjectSpec;
      expect(so.apiVersion).toBe('keda.sh/v1alpha1');
      expect(spec.scaleTargetRef).toEqual({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: so.metadata.name,
      });
      expect(ofKind(objs, 'Deployment').map((d) => d.metadata.name)).toContain(so.metadata.name);
      // KEDA owns the replica count: an upgrade must not reset it.
      expect(deployment(objs, component(so)!).replicas, so.metadata.name).toBeUndefined();
      expect(spec.maxReplicaCount).toBeGreaterThanOrEqual(spec.minReplicaCount);
      expect(spec.cooldownPeriod).toBeGreaterThan(0);
      expect(spec.pollingInterval).toBeGreaterThan(0);
    }
    // Two controllers on one Deployment would fight: the gateway alone keeps its CPU HPA.
    expect(ofKind(objs, 'HorizontalPodAutoscaler').map(component)).toEqual(['gateway']);
    // Nothing needs credentials here (plain Kafka, Prometheus without auth).
    expect(ofKind(objs, 'TriggerAuthentication')).toEqual([]);
    for (const so of scaledObjects(objs))
      for (const t of (so.spec as ScaledObjectSpec).triggers) expect(t.authenticationRef).toBeUndefined();
  });

  it('scales the extractor on the lag of both worker groups, capped by partitions, and on CPU', () => {
    const spec = scaledObject(render(DEV, KEDA_ON), 'extractor');
    expect(spec).toMatchObject({ minReplicaCount: 2, maxReplicaCount: 16 });
    const [jobs, bulk, cpu] = spec.triggers;
    expect(jobs).toMatchObject({
      type: 'kafka',
      metadata: {
        bootstrapServers: 'kafka:9092',
        consumerGroup: 'extractor-workers',
        topic: 'extract.jobs.v1',
        lagThreshold: '32',
        allowIdleConsumers: 'false',
      },
    });
    expect(bulk).toMatchObject({
      type: 'kafka',
      metadata: {
        consumerGroup: 'extractor-bulk-workers',
        topic: 'extract.bulk-jobs.v1',
        lagThreshold: '16',
      },
    });
    expect(cpu).toEqual({ type: 'cpu', name: 'cpu', metricType: 'Utilization', metadata: { value: '70' } });
    // Renamed topics and groups (the extractor's env) are what the triggers read.
    const renamed = scaledObject(
      render(DEV, [
        ...KEDA_ON,
        '--set',
        'components.extractor.env.EXTRACT_JOBS_TOPIC=acme.jobs',
        '--set',
        'components.extractor.env.EXTRACT_BULK_WORKERS_GROUP=acme-bulk',
        '--set',
        'components.extractor.keda.cpuUtilization=0',
      ]),
      'extractor',
    );
    expect(renamed.triggers.map((t) => [t.metadata.topic, t.metadata.consumerGroup])).toEqual([
      ['acme.jobs', 'extractor-workers'],
      ['extract.bulk-jobs.v1', 'acme-bulk'],
    ]);
  });

  it('scales the job service on its backlog gauge and the speech engine on queued and running transcriptions', () => {
    const objs = render(DEV, KEDA_ON);
    const [backlog] = scaledObject(objs, 'jobs').triggers;
    expect(backlog).toMatchObject({
      type: 'prometheus',
      metadata: {
        serverAddress: 'http://prometheus-operated.monitoring.svc:9090',
        query: 'max(subx_jobs_backlog{namespace="subx"})',
        threshold: '4',
        activationThreshold: '0',
      },
    });
    const [speech] = scaledObject(objs, 'speech').triggers;
    expect(speech!.type).toBe('prometheus');
    // Counted in the callers: an engine at zero replicas exports nothing that could wake it.
    expect(speech!.metadata.query).toBe(
      'sum(subx_transcription_in_flight{namespace="subx"}) + sum(subx_transcription_waiting{namespace="subx"})',
    );
    expect(speech!.metadata.activationThreshold).toBe('0');
  });

  it('lets the speech engine scale to zero, and its callers wait for it to come up', () => {
    const objs = render(DEV, KEDA_ON);
    const speech = scaledObject(objs, 'speech');
    expect(speech.minReplicaCount).toBe(0);
    expect(speech.triggers.map((t) => t.type)).toEqual(['prometheus']);
    expect(configOf(objs, 'extractor').TRANSCRIBE_UNAVAILABLE_WAIT_MS).toBe('3m');
    // A floor of one: nothing to wait for. The caller's own setting wins.
    const floor = render(DEV, [...KEDA_ON, '--set', 'components.speech.keda.minReplicaCount=1']);
    expect(scaledObject(floor, 'speech').minReplicaCount).toBe(1);
    expect(configOf(floor, 'extractor').TRANSCRIBE_UNAVAILABLE_WAIT_MS).toBeUndefined();
    const own = render(DEV, [
      ...KEDA_ON,
      '--set',
      'components.extractor.env.TRANSCRIBE_UNAVAILABLE_WAIT_MS=10m',
    ]);
    expect(configOf(own, 'extractor').TRANSCRIBE_UNAVAILABLE_WAIT_MS).toBe('10m');
    // Zero replicas cannot be left on CPU (a stopped pod uses none): refused.
    expect(renderError(DEV, [...KEDA_ON, '--set', 'components.speech.keda.cpuUtilization=70'])).toMatch(
      /components\.speech\.keda: minReplicaCount 0 with cpuUtilization/,
    );
  });

  it('renders TriggerAuthentications from Secrets when Kafka and Prometheus need credentials', () => {
    const objs = render(KEDA);
    const kafka = authentication(objs, 'subx-keda-kafka');
    expect(kafka.configMapTargetRef).toEqual([
      { parameter: 'username', name: 'subx-extractor', key: 'KAFKA_SASL_USERNAME' },
    ]);
    expect(kafka.secretTargetRef).toEqual([
      { parameter: 'password', name: 'subx-secrets', key: 'KAFKA_SASL_PASSWORD' },
      { parameter: 'ca', name: 'subx-kafka-ca', key: 'ca.crt' },
    ]);
    // The username KEDA reads is the one the extractor uses.
    expect(configOf(objs, 'extractor').KAFKA_SASL_USERNAME).toBe('subx');
    for (const t of scaledObject(objs, 'extractor').triggers.filter((x) => x.type === 'kafka')) {
      expect(t.metadata).toMatchObject({ sasl: 'scram_sha512', tls: 'enable' });
      expect(t.authenticationRef).toEqual({ name: 'subx-keda-kafka' });
    }
    expect(authentication(objs, 'subx-keda-prometheus').secretTargetRef).toEqual([
      { parameter: 'bearerToken', name: 'prometheus-reader', key: 'token' },
    ]);
    for (const name of ['jobs', 'speech']) {
      const [t] = scaledObject(objs, name).triggers;
      expect(t).toMatchObject({
        metadata: { authModes: 'bearer' },
        authenticationRef: { name: 'subx-keda-prometheus' },
      });
    }
    // Basic auth, names of one's own, and an existing Secret for the chart's keys.
    const basic = render(KEDA, [
      '--set',
      'autoscaling.keda.prometheus.authMode=basic',
      '--set',
      'autoscaling.keda.prometheus.authenticationName=prom-auth',
      '--set',
      'autoscaling.keda.kafka.authenticationName=kafka-auth',
      '--set',
      'secrets.existingSecret=subx-runtime',
    ]);
    expect(authentication(basic, 'prom-auth').secretTargetRef).toEqual([
      { parameter: 'username', name: 'prometheus-reader', key: 'username' },
      { parameter: 'password', name: 'prometheus-reader', key: 'password' },
    ]);
    expect(authentication(basic, 'kafka-auth').secretTargetRef?.[0]).toEqual({
      parameter: 'password',
      name: 'subx-runtime',
      key: 'KAFKA_SASL_PASSWORD',
    });
    expect(scaledObject(basic, 'speech').triggers[0]!.authenticationRef).toEqual({ name: 'prom-auth' });
    // Credentials asked for, but no Secret to read them from: refused.
    expect(renderError(KEDA, ['--set', 'autoscaling.keda.prometheus.secretName='])).toMatch(
      /authMode bearer needs autoscaling\.keda\.prometheus\.secretName/,
    );
  });

  it('refuses a maxReplicaCount above the partitions of the topic the extractor consumes', () => {
    const error = renderError(DEV, [...KEDA_ON, '--set', 'components.extractor.keda.maxReplicaCount=65']);
    expect(error).toMatch(
      /components\.extractor\.keda\.maxReplicaCount \(65\) is above the 64 partitions of extract\.jobs\.v1 \(infra\.kafka\.jobsPartitions\): KEDA never runs more consumers of group extractor-workers than the topic has partitions/,
    );
    // The same bound read from the one value: fewer partitions refuse the default maximum ...
    expect(renderError(DEV, [...KEDA_ON, '--set', 'infra.kafka.jobsPartitions=8'])).toMatch(
      /maxReplicaCount \(16\) is above the 8 partitions/,
    );
    // ... and more allow a higher one; the limit is exactly the partition count.
    const wider = render(DEV, [
      ...KEDA_ON,
      '--set',
      'infra.kafka.jobsPartitions=128',
      '--set',
      'components.extractor.keda.maxReplicaCount=128',
    ]);
    expect(scaledObject(wider, 'extractor').maxReplicaCount).toBe(128);
    expect(
      renderError(DEV, [...KEDA_ON, '--set', 'components.extractor.keda.maxReplicaCount=64']),
    ).toBeUndefined();
    // Prometheus-scaled components consume no topic: no partition bound.
    expect(
      scaledObject(render(DEV, [...KEDA_ON, '--set', 'components.jobs.keda.maxReplicaCount=100']), 'jobs')
        .maxReplicaCount,
    ).toBe(100);
    // Off, nothing is checked: the CPU HPA has bounds of its own.
    expect(
      renderError(DEV, [...ALL_ON, '--set', 'components.extractor.keda.maxReplicaCount=65']),
    ).toBeUndefined();
    expect(renderError(DEV, [...KEDA_ON, '--set', 'components.jobs.keda.minReplicaCount=7'])).toMatch(
      /components\.jobs\.keda: minReplicaCount \(7\) is above maxReplicaCount \(6\)/,
    );
  });

  it('keeps each component’s own switch: KEDA off for one leaves it its CPU HPA', () => {
    const objs = render(DEV, [...KEDA_ON, '--set', 'components.jobs.keda.enabled=false']);
    expect(scaledObjects(objs).map(component).sort()).toEqual(['extractor', 'speech']);
    expect(ofKind(objs, 'HorizontalPodAutoscaler').map(component).sort()).toEqual(['gateway', 'jobs']);
    // A disabled component gets no ScaledObject.
    const noJobs = render(DEV, [...KEDA_ON, '--set', 'components.jobs.enabled=false']);
    expect(scaledObjects(noJobs).map(component).sort()).toEqual(['extractor', 'speech']);
  });

  it('reads the jobs topics’ partitions from the value scripts/kafka-topics.sh and the docs agree on', () => {
    const values = parse(readFileSync(path.join(chartDir, 'values.yaml'), 'utf8')) as {
      infra: { kafka: { jobsPartitions: number } };
    };
    const partitions = values.infra.kafka.jobsPartitions;
    const script = readFileSync(path.join(repoRoot, 'scripts/kafka-topics.sh'), 'utf8');
    expect(Number(/JOBS_PARTITIONS=\$\{KAFKA_JOBS_PARTITIONS:-(\d+)\}/.exec(script)?.[1])).toBe(partitions);
    // Where the topics are created for the chart (the cluster's topic Job) and for compose: the
    // script's default, or the same number.
    for (const file of ['test/cluster/engines.yaml', 'docker-compose.yml']) {
      const text = readFileSync(path.join(repoRoot, file), 'utf8');
      expect(text, file).toContain('kafka-topics.sh');
      const set = /KAFKA_JOBS_PARTITIONS\D+(\d+)/.exec(text);
      if (set) expect(Number(set[1]), file).toBe(partitions);
    }
    const docs = {
      'docs/events.md': /`KAFKA_JOBS_PARTITIONS` \(default (\d+)\)/,
      'docs/operations.md':
        /partitions of `extract\.jobs\.v1` \(and `extract\.bulk-jobs\.v1`\) \| `scripts\/kafka-topics\.sh` \((\d+)\)/,
      'deploy/README.md': /`infra\.kafka\.jobsPartitions` \((\d+)/,
    };
    for (const [file, pattern] of Object.entries(docs)) {
      const text = readFileSync(path.join(repoRoot, file), 'utf8');
      expect(Number(pattern.exec(text)?.[1]), file).toBe(partitions);
    }
  });
});
