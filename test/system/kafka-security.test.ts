/**
 * Kafka over TLS with SASL PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512, against a real
 * broker. The suite starts its OWN Kafka (scripts/engines.sh, private ENGINES_DIR) with a SASL_SSL
 * listener beside the PLAINTEXT one (certificates made here; users in the broker's JAAS config for
 * PLAIN, SCRAM credentials added with Kafka's own ConfigCommand). The clients are configured the
 * way the services are: KAFKA_* variables through the gateway's config schema and service-kit's
 * kafkaSecurityFromConfig, into @subx/ports's Kafka bus.
 */
import { randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdapters } from '@subx/ports';
import type { DeliveredMessage } from '@subx/ports';
import { ConfigError, kafkaSecurityFromConfig } from '@subx/service-kit';
import { FAST_KAFKA_TIMINGS } from '@subx/testing/engines';
import { freePort } from '@subx/testing/free-port';
import { createTestPki } from '@subx/testing/tls';
import type { TestPki } from '@subx/testing/tls';
import { loadConfig } from '../../services/gateway/src/config.ts';
import { root } from './faults/support.ts';

const java = spawnSync('java', ['-version'], { stdio: 'ignore' }).status === 0;
if (!java && process.env.CI) throw new Error('java is not on PATH: scripts/engines.sh cannot start Kafka');

const PLAIN_PASSWORD = `plain-${randomUUID()}`;
const SCRAM_PASSWORD = `scram-${randomUUID()}`;

function engines(dir: string, env: Record<string, string>, ...args: string[]): string {
  const run = spawnSync('bash', ['scripts/engines.sh', ...args], {
    cwd: root,
    env: { ...process.env, ...env, ENGINES_DIR: dir },
    encoding: 'utf8',
    timeout: 180_000,
  });
  if (run.status !== 0) throw new Error(`engines.sh ${args.join(' ')} failed:\n${run.stderr}`);
  return run.stdout;
}

/** Kafka's own tool adds the SCRAM credentials (kafkajs has no API for them). */
function addScramUser(
  dir: string,
  plaintextBroker: string,
  mechanism: string,
  user: string,
  password: string,
): void {
  const cache = process.env.ENGINES_CACHE ?? join(homedir(), '.cache', 'subx-engines');
  const home = readdirSync(cache)
    .filter((d) => d.startsWith('kafka-'))
    .map((d) => join(cache, d))
    .find((d) => existsSync(join(d, 'libs')));
  if (!home) throw new Error(`no Kafka installation under ${cache}`);
  const run = spawnSync(
    'java',
    [
      '-Xmx256m',
      '-XX:+UseSerialGC',
      '-XX:TieredStopAtLevel=1',
      `-Dlog4j2.configurationFile=${join(dir, 'kafka', 'log4j2-tools.properties')}`,
      '-cp',
      `${join(home, 'libs')}/*`,
      'kafka.admin.ConfigCommand',
      '--bootstrap-server',
      plaintextBroker,
      '--alter',
      '--add-config',
      `${mechanism.toUpperCase()}=[password=${password}]`,
      '--entity-type',
      'users',
      '--entity-name',
      user,
    ],
    { encoding: 'utf8', timeout: 120_000 },
  );
  if (run.status !== 0) throw new Error(`ConfigCommand failed:\n${run.stdout}\n${run.stderr}`);
}

/**
 * A broker that just started answers metadata before it serves consumer groups ("the coordinator is
 * loading" while __consumer_offsets is created): wait, bounded, until a group lookup succeeds.
 */
async function untilGroupsServed(broker: string, timeoutMs = 90_000): Promise<void> {
  const admin = new Kafka({ clientId: 'sasl-warmup', brokers: [broker], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      try {
        await admin.describeGroups(['sasl-warmup']);
        return;
      } catch (err) {
        if (Date.now() > deadline) throw err;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    await admin.disconnect();
  }
}

describe.skipIf(!java)('Kafka over TLS with SASL (real broker)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'subx-kafka-sasl-'));
  let pki: TestPki;
  let saslBroker = '';

  beforeAll(async () => {
    pki = await createTestPki();
    const keystore = join(pki.dir, 'broker-keystore.pem');
    writeFileSync(keystore, `${pki.serverKey.trim()}\n${pki.serverCert.trim()}\n`, { mode: 0o600 });
    const saslPort = await freePort();
    saslBroker = `127.0.0.1:${saslPort}`;
    const extra = [
      `listeners=PLAINTEXT://127.0.0.1:@PORT@,SASL_SSL://${saslBroker},CONTROLLER://127.0.0.1:@CONTROLLER_PORT@`,
      `advertised.listeners=PLAINTEXT://127.0.0.1:@PORT@,SASL_SSL://${saslBroker}`,
      'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL',
      'sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512',
      `listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_subx-plain="${PLAIN_PASSWORD}";`,
      'listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;',
      'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;',
      'listener.name.sasl_ssl.ssl.keystore.type=PEM',
      `listener.name.sasl_ssl.ssl.keystore.location=${keystore}`,
    ].join('\n');
    const up = engines(dir, { KAFKA_EXTRA_CONFIG: extra }, 'up', 'kafka');
    const plaintextBroker = /KAFKA_BROKERS=(\S+)/.exec(up)?.[1] ?? '';
    // One mechanism per user and call (the broker refuses two changes of one user in one request).
    addScramUser(dir, plaintextBroker, 'scram-sha-256', 'subx-scram-sha-256', SCRAM_PASSWORD);
    addScramUser(dir, plaintextBroker, 'scram-sha-512', 'subx-scram-sha-512', SCRAM_PASSWORD);
    await untilGroupsServed(plaintextBroker);
  }, 300_000);

  afterAll(async () => {
    try {
      engines(dir, {}, 'down');
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(`${dir}.lock`, { force: true });
      pki?.remove();
    }
  }, 120_000);

  /** A bus built from these variables as a service builds it; one message there and back. */
  async function roundTrip(env: Record<string, string>): Promise<'delivered' | 'refused'> {
    const config = loadConfig({ KAFKA_BROKERS: saslBroker, ...env });
    const adapters = createAdapters({
      kafkaBrokers: config.KAFKA_BROKERS,
      clientId: `sasl-test-${randomUUID().slice(0, 8)}`,
      kafkaConsumer: FAST_KAFKA_TIMINGS.consumer,
      kafkaSecurity: kafkaSecurityFromConfig(config),
    });
    const topic = `t.sasl.${randomUUID().slice(0, 8)}`;
    try {
      await adapters.bus.ensureTopics([topic]);
      let deliver: (message: DeliveredMessage) => void = () => {};
      const received = new Promise<DeliveredMessage>((resolve) => (deliver = resolve));
      await adapters.bus.subscribe({
        groupId: `g-${topic}`,
        topics: [topic],
        fromBeginning: true,
        handler: async (message) => deliver(message),
      });
      await adapters.bus.publish(topic, [
        { key: 'k', value: new TextEncoder().encode('over sasl'), headers: {} },
      ]);
      const message = await Promise.race([
        received,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no delivery in 60 s')), 60_000)),
      ]);
      expect(new TextDecoder().decode(message.value)).toBe('over sasl');
      return 'delivered';
    } catch (err) {
      if (/no delivery/.test(String(err))) throw err;
      return 'refused';
    } finally {
      await adapters.close();
    }
  }

  const tls = () => ({ KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: pki.caFile });

  it('SASL/PLAIN over TLS: delivered with the right password, refused with a wrong one', async () => {
    const plain = { KAFKA_SASL_MECHANISM: 'PLAIN', KAFKA_SASL_USERNAME: 'subx-plain' };
    expect(await roundTrip({ ...tls(), ...plain, KAFKA_SASL_PASSWORD: PLAIN_PASSWORD })).toBe('delivered');
    expect(await roundTrip({ ...tls(), ...plain, KAFKA_SASL_PASSWORD: 'wrong' })).toBe('refused');
  });

  it('SCRAM-SHA-256 and SCRAM-SHA-512 over TLS', async () => {
    for (const mechanism of ['scram-sha-256', 'scram-sha-512']) {
      const scram = { KAFKA_SASL_MECHANISM: mechanism, KAFKA_SASL_USERNAME: `subx-${mechanism}` };
      expect(await roundTrip({ ...tls(), ...scram, KAFKA_SASL_PASSWORD: SCRAM_PASSWORD }), mechanism).toBe(
        'delivered',
      );
    }
  });

  it('no TLS, or a broker certificate from another CA: refused before any credential is sent', async () => {
    const plain = {
      KAFKA_SASL_MECHANISM: 'plain',
      KAFKA_SASL_USERNAME: 'subx-plain',
      KAFKA_SASL_PASSWORD: PLAIN_PASSWORD,
    };
    expect(await roundTrip(plain)).toBe('refused');
    expect(await roundTrip({ ...plain, KAFKA_SSL_CA_FILE: pki.otherCaFile })).toBe('refused');
  });

  it('names incomplete settings at start, without their values', () => {
    let error: unknown;
    try {
      kafkaSecurityFromConfig(
        loadConfig({ KAFKA_SASL_MECHANISM: 'scram-sha-256', KAFKA_SSL_CA_FILE: '/nonexistent' }),
      );
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues.map((i) => i.key).sort()).toEqual([
      'KAFKA_SASL_PASSWORD',
      'KAFKA_SASL_USERNAME',
      'KAFKA_SSL_CA_FILE',
    ]);
    expect(() => loadConfig({ KAFKA_SASL_MECHANISM: 'gssapi' })).toThrow(/KAFKA_SASL_MECHANISM/);
  });
});
