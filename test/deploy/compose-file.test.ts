// docker-compose.yml rules that a Compose parser does not check on its own (scripts/validate-deploy.sh
// runs the real parser): profile selection (Debian's docker-compose 1.29 ignores profiles in
// `config`), dependency conditions that can actually be met, peer addresses matching the ports the
// services listen on, and .env.example documenting every variable the file reads.
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { TOPICS } from '@subx/contracts';
import { DEFAULT_KAFKA_TOPIC_RETENTION_MS } from '@subx/service-kit';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const composeText = readFileSync(path.join(repoRoot, 'docker-compose.yml'), 'utf8');

type Service = {
  profiles?: string[];
  image?: string;
  build?: { context: string; dockerfile: string; args?: Record<string, string> };
  environment?: Record<string, string | number>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] | string };
  ports?: string[];
  volumes?: string[];
  entrypoint?: string[];
};
const compose = parse(composeText, { merge: true }) as { services: Record<string, Service> };
const services = compose.services;

// What the .env of `bash scripts/containers.sh env` supplies for the required secrets.
const SECRET_VALUES: Record<string, string> = {
  ADMIN_TOKEN: 'test-admin-token-0123456789abcdef0123',
  API_KEY_PEPPER: 'test-pepper-0123456789abcdef0123456789abcdef',
  GRAFANA_ADMIN_PASSWORD: 'test-grafana-password',
};
/** `${NAME:-default}` → default, `${NAME:?message}` → the secret's value. */
const withDefaults = (value: string): string =>
  value
    .replace(/\$\{([A-Z0-9_]+):\?[^}]*\}/g, (_, name: string) => SECRET_VALUES[name] ?? '')
    .replace(/\$\{[A-Z0-9_]+:-([^}]*)\}/g, '$1');

const INFRA = ['kafka', 'kafka-init', 'mongo', 'otel-collector', 'redis'];
const APPS = ['ai', 'billing', 'comments', 'dashboard', 'extractor', 'gateway', 'jobs'];

// Compose semantics: a service runs when it has no profiles or one of its profiles is active.
const enabled = (active: string[]): string[] =>
  Object.entries(services)
    .filter(([, s]) => !s.profiles || s.profiles.some((p) => active.includes(p)))
    .map(([name]) => name)
    .sort();

describe('docker-compose.yml', () => {
  it('profile infra starts the backing services only; profile apps starts everything', () => {
    expect(enabled(['infra'])).toEqual(INFRA);
    expect(enabled(['apps'])).toEqual([...INFRA, ...APPS].sort());
  });

  it('.env.example activates the apps profile, so a plain `docker compose up` runs the whole stack', () => {
    const env = readFileSync(path.join(repoRoot, '.env.example'), 'utf8');
    const profiles = /^COMPOSE_PROFILES=(.*)$/m.exec(env)?.[1]?.split(',') ?? [];
    expect(enabled(profiles)).toEqual([...INFRA, ...APPS].sort());
  });

  it('only depends on services that are enabled with it and can meet the condition', () => {
    for (const [name, svc] of Object.entries(services)) {
      for (const [dep, { condition }] of Object.entries(svc.depends_on ?? {})) {
        const target = services[dep];
        expect(target, `${name} -> ${dep}`).toBeDefined();
        for (const profile of svc.profiles ?? []) {
          expect(target?.profiles ?? [profile], `${name} -> ${dep} under profile ${profile}`).toContain(
            profile,
          );
        }
        if (condition === 'service_healthy') expect(target?.healthcheck, `${dep} healthcheck`).toBeDefined();
        if (condition === 'service_completed_successfully') expect(dep).toBe('kafka-init');
      }
    }
  });

  it('builds every app from the shared Dockerfile and probes it with the image health check', () => {
    for (const name of APPS) {
      const svc = services[name] as Service;
      expect(svc.build?.dockerfile, name).toBe('deploy/docker/Dockerfile');
      expect(svc.build?.args?.SERVICE, name).toBe(name);
      expect(svc.healthcheck?.test, name).toContain('/app/deploy/docker/healthcheck.ts');
      expect(svc.environment?.OTEL_SERVICE_NAME, name).toBe(name);
      // Apps wait for topics: nothing creates them implicitly (auto-create is off).
      if (svc.environment?.KAFKA_BROKERS !== undefined) {
        expect(svc.depends_on?.['kafka-init']?.condition, name).toBe('service_completed_successfully');
      }
    }
    expect(services.kafka?.environment?.KAFKA_AUTO_CREATE_TOPICS_ENABLE).toBe('false');
  });

  it('runs every app as the Helm chart does: uid 1000, read-only root, no capabilities, no escalation', () => {
    for (const name of APPS) {
      const svc = services[name] as Service & Record<string, unknown>;
      expect(svc.user, name).toBe('1000:1000');
      expect(svc.read_only, name).toBe(true);
      expect(svc.cap_drop, name).toEqual(['ALL']);
      expect(svc.security_opt, name).toContain('no-new-privileges:true');
      expect(svc.tmpfs, name).toEqual(['/tmp:size=64m']);
    }
  });

  it('runs the speech engine in its own profile, like the apps, never published, the extractor pointed at it on request', () => {
    const speech = services.speech as Service & Record<string, unknown>;
    expect(speech.profiles).toEqual(['speech']);
    expect(speech.build?.dockerfile).toBe('deploy/docker/speech.Dockerfile');
    expect(speech.image).toBe('subx/speech:${SUBX_IMAGE_TAG:-dev}');
    expect(speech.user).toBe('1000:1000');
    expect(speech.read_only).toBe(true);
    expect(speech.cap_drop).toEqual(['ALL']);
    expect(speech.ports).toBeUndefined();
    expect(speech.environment?.METRICS_PORT).toBe('9464');
    // Its drain (STT_SHUTDOWN_TIMEOUT_S) fits in the grace period compose gives it.
    expect(Number(String(speech.stop_grace_period).replace(/s$/, ''))).toBeGreaterThan(
      Number(speech.environment?.STT_SHUTDOWN_TIMEOUT_S),
    );
    expect(services.extractor?.environment?.TRANSCRIBE_BASE_URL).toBe('${TRANSCRIBE_BASE_URL:-}');
  });

  it('points every *_GRPC_ADDR at the port the target service listens on, and waits for it', () => {
    let checked = 0;
    for (const [name, svc] of Object.entries(services)) {
      for (const [key, value] of Object.entries(svc.environment ?? {})) {
        if (!key.endsWith('_GRPC_ADDR')) continue;
        const [host, port] = String(value).split(':');
        const target = services[host ?? ''];
        expect(target?.environment?.GRPC_PORT, `${name} ${key}`).toBe(port);
        expect(svc.depends_on?.[host ?? '']?.condition, `${name} waits for ${host}`).toBe('service_healthy');
        checked++;
      }
    }
    expect(checked).toBe(8); // gateway: 5 peers, ai: 2, jobs: 1
  });

  it('publishes the API on localhost:8080 and reads ADMIN_TOKEN from the environment', () => {
    expect(services.gateway?.ports).toContain('${GATEWAY_HOST_PORT:-8080}:8080');
    expect(services.gateway?.environment?.ADMIN_TOKEN).toMatch(/^\$\{ADMIN_TOKEN:\?.+\}$/);
  });

  it('publishes Redis, MongoDB, Kafka and the collector on the loopback interface only', () => {
    for (const name of ['redis', 'mongo', 'kafka', 'otel-collector']) {
      const ports = services[name]?.ports ?? [];
      expect(ports.length, name).toBeGreaterThan(0);
      for (const port of ports) expect(port, name).toMatch(/^127\.0\.0\.1:/);
    }
  });

  it('has no default for any secret: compose refuses to start until one is given', () => {
    const secret = /TOKEN|PEPPER|PASSWORD|SECRET|_KEY$/;
    const defaults = [...composeText.matchAll(/\$\{([A-Z_][A-Z0-9_]*)(:?[-?])([^}]*)\}/g)].filter(
      ([, name]) => secret.test(name ?? ''),
    );
    expect(defaults.map(([, name]) => name)).toEqual(
      expect.arrayContaining(['ADMIN_TOKEN', 'API_KEY_PEPPER', 'GRAFANA_ADMIN_PASSWORD']),
    );
    for (const [text, , operator, value] of defaults) {
      // `${X:?message}` (required) or an empty default (an optional key such as OPENAI_API_KEY).
      if (operator === ':?') continue;
      expect(value, text).toBe('');
    }
    const env = readFileSync(path.join(repoRoot, '.env.example'), 'utf8');
    for (const name of ['ADMIN_TOKEN', 'API_KEY_PEPPER', 'GRAFANA_ADMIN_PASSWORD'])
      expect(env, `.env.example ${name}`).toMatch(new RegExp(`^${name}=$`, 'm'));
  });

  it('gives kafka-init and every service that uses Kafka one KAFKA_TOPIC_RETENTION_MS, 7 days unless .env says otherwise', () => {
    const kafkaUsers = Object.entries(services)
      .filter(([name, s]) => name === 'kafka-init' || s.environment?.KAFKA_BROKERS !== undefined)
      .map(([name]) => name)
      .sort();
    expect(kafkaUsers).toEqual(['billing', 'extractor', 'gateway', 'jobs', 'kafka-init']);
    const values = new Set(kafkaUsers.map((name) => services[name]?.environment?.KAFKA_TOPIC_RETENTION_MS));
    expect([...values]).toEqual(['${KAFKA_TOPIC_RETENTION_MS:-604800000}']);
    expect(withDefaults([...values][0] as string)).toBe(String(DEFAULT_KAFKA_TOPIC_RETENTION_MS));
  });

  it('documents every variable it interpolates in .env.example', () => {
    const env = readFileSync(path.join(repoRoot, '.env.example'), 'utf8');
    const documented = new Set([...env.matchAll(/^([A-Z_][A-Z0-9_]*)=/gm)].map((m) => m[1]));
    const used = new Set([...composeText.matchAll(/\$\{([A-Z_][A-Z0-9_]*)/g)].map((m) => m[1]));
    expect([...used].filter((v) => !documented.has(v))).toEqual([]);
  });
});

describe('scripts/kafka-topics.sh (kafka-init)', () => {
  // A stand-in for Kafka's kafka-topics.sh that records its arguments; the real CLI is exercised by
  // `docker compose up`. What matters here is which topics the script asks for, and how.
  function runWithRecorder(env: Record<string, string> = {}): Promise<{ code: number; calls: string[][] }> {
    const dir = mkdtempSync(path.join(tmpdir(), 'kafka-topics-'));
    const log = path.join(dir, 'calls.log');
    const bin = path.join(dir, 'kafka-topics.sh');
    writeFileSync(bin, `#!/usr/bin/env bash\nprintf '%s\\t' "$@" >> '${log}'\necho >> '${log}'\n`);
    chmodSync(bin, 0o755);
    writeFileSync(log, '');
    return new Promise((resolve) => {
      execFile(
        'bash',
        [path.join(repoRoot, 'scripts/kafka-topics.sh')],
        { env: { PATH: process.env.PATH ?? '', KAFKA_TOPICS_BIN: bin, ...env }, timeout: 30_000 },
        (err) => {
          const calls = readFileSync(log, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((line) => line.split('\t').filter(Boolean));
          resolve({ code: err ? Number(err.code ?? 1) : 0, calls });
        },
      );
    });
  }

  it('creates each topic and its .dlq twin idempotently, kept 7 days; extraction jobs (batch, bulk) get 64 partitions, the rest 3', async () => {
    const { code, calls } = await runWithRecorder({ KAFKA_BOOTSTRAP: 'kafka:9092' });
    expect(code).toBe(0);
    const creates = calls.filter((c) => c.includes('--create'));
    const topics = creates.map((c) => c[c.indexOf('--topic') + 1]).sort();
    expect(topics).toEqual([
      'accounts.v1',
      'accounts.v1.dlq',
      'audit.v1',
      'audit.v1.dlq',
      'billing.credit-usage.v1',
      'billing.credit-usage.v1.dlq',
      'billing.request-usage.v1',
      'billing.request-usage.v1.dlq',
      'extract.bulk-jobs.v1',
      'extract.bulk-jobs.v1.dlq',
      'extract.jobs.v1',
      'extract.jobs.v1.dlq',
      'extract.results.v1',
      'extract.results.v1.dlq',
      'jobs.lifecycle.v1',
      'jobs.lifecycle.v1.dlq',
      'watches.lifecycle.v1',
      'watches.lifecycle.v1.dlq',
    ]);
    // Every topic of the contracts, so that a new one cannot be forgotten here.
    for (const { default: topic } of Object.values(TOPICS)) expect(topics).toContain(topic);
    for (const c of creates) {
      expect(c).toContain('--if-not-exists');
      const topic = c[c.indexOf('--topic') + 1] ?? '';
      const jobs = topic.startsWith('extract.jobs.v1') || topic.startsWith('extract.bulk-jobs.v1');
      expect(c[c.indexOf('--partitions') + 1], topic).toBe(jobs ? '64' : '3');
      expect(c[c.indexOf('--bootstrap-server') + 1]).toBe('kafka:9092');
      // Every topic carries account ids: kept a week, not the broker's default (docs/events.md),
      // the same default as the services' KAFKA_TOPIC_RETENTION_MS for the topics they create.
      expect(c[c.indexOf('--config') + 1], topic).toBe(`retention.ms=${DEFAULT_KAFKA_TOPIC_RETENTION_MS}`);
    }
  });

  it('creates the topics with the retention of KAFKA_TOPIC_RETENTION_MS when set', async () => {
    const { code, calls } = await runWithRecorder({ KAFKA_TOPIC_RETENTION_MS: '86400000' });
    expect(code).toBe(0);
    const creates = calls.filter((c) => c.includes('--create'));
    expect(creates.length).toBeGreaterThan(0);
    for (const c of creates) expect(c[c.indexOf('--config') + 1]).toBe('retention.ms=86400000');
  });

  it('fails when the kafka-topics binary is missing', async () => {
    const result = await new Promise<number>((resolve) =>
      execFile(
        'bash',
        [path.join(repoRoot, 'scripts/kafka-topics.sh')],
        { env: { PATH: '/usr/bin:/bin', KAFKA_TOPICS_BIN: '/nonexistent/kafka-topics.sh' } },
        (err) => resolve(err ? Number(err.code ?? 1) : 0),
      ),
    );
    expect(result).toBe(1);
  });
});

describe('docker-compose.yml defaults start a gateway', () => {
  it("the gateway's default environment passes the gateway's own config validation", async () => {
    const { loadAccessConfig } = await import('../../services/gateway/src/access/config.ts');
    const { loadConfig } = await import('../../services/gateway/src/config.ts');
    // `${NAME:-default}` → default: what `docker compose up` with only the secrets set gives the gateway.
    const env = Object.fromEntries(
      Object.entries(services.gateway?.environment ?? {}).map(([k, v]) => [k, withDefaults(String(v))]),
    );
    expect(() => loadConfig(env)).not.toThrow();
    expect(() => loadAccessConfig(env, { embedded: false })).not.toThrow();
  });
});

describe('docker-compose.yml defaults start the job service beside the gateway', () => {
  it("its default environment passes its config validation, with the gateway's pepper and database", async () => {
    const { loadJobServiceConfig } = await import('../../services/jobs/src/config.ts');
    const envOf = (name: string) =>
      Object.fromEntries(
        Object.entries(services[name]?.environment ?? {}).map(([k, v]) => [k, withDefaults(String(v))]),
      );
    const gateway = envOf('gateway');
    const config = loadJobServiceConfig(envOf('jobs'));
    expect(gateway.JOBS_GRPC_ADDR).toBe(`jobs:${config.GRPC_PORT}`);
    // Webhook secrets are sealed under the pepper, and a job charges the gateway's accounts.
    expect(config.API_KEY_PEPPER).toBe(gateway.API_KEY_PEPPER);
    expect(config.MONGO_DB).toBe(gateway.MONGO_DB);
    for (const key of ['MONGO_URL', 'REDIS_URL', 'KAFKA_BROKERS'] as const) {
      expect(envOf('jobs')[key], key).toBe(gateway[key]);
    }
    expect(config.WEBHOOK_ALLOW_PRIVATE_NETWORKS).toBe(false);
  });
});

describe('docker-compose.yml defaults start a dashboard', () => {
  it("the dashboard's default environment passes its config validation and reaches the gateway", async () => {
    const { loadDashboardConfig } = await import('../../services/dashboard/src/config.ts');
    const env = Object.fromEntries(
      Object.entries(services.dashboard?.environment ?? {}).map(([k, v]) => [k, withDefaults(String(v))]),
    );
    const config = loadDashboardConfig(env);
    expect(config.GATEWAY_URL).toBe(`http://gateway:${services.gateway?.environment?.PORT}`);
    expect(config.ADMIN_TOKEN).toBe(withDefaults(String(services.gateway?.environment?.ADMIN_TOKEN)));
    expect(services.dashboard?.ports).toContain('${DASHBOARD_HOST_PORT:-8090}:8090');
    expect(config.DASHBOARD_PORT).toBe(8090);
  });
});
