import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { TestRunner, describe, it } from 'vitest';
import { ENGINES_UP, REQUIREMENT_META_KEY, type SuiteRequirement } from './requirements.ts';

export { ENGINES_UP, REQUIREMENT_META_KEY, type SuiteRequirement } from './requirements.ts';

/**
 * Real engines for integration tests, in order of preference:
 * 1. the environment: REDIS_URL, KAFKA_BROKERS (comma-separated host:port), MONGO_URL
 *    (`eval "$(bash scripts/engines.sh up)"` sets all three);
 * 2. a container started with testcontainers when a Docker engine is reachable
 *    (redis:7, apache/kafka:3.9.0 in KRaft mode, mongo:7), one per engine per test process;
 * 3. nothing: `describeWithEngine` skips loudly, or fails under CI.
 */
export type EngineName = 'redis' | 'kafka' | 'mongo';

const envVar: Record<EngineName, string> = { redis: 'REDIS_URL', kafka: 'KAFKA_BROKERS', mongo: 'MONGO_URL' };

const started = new Map<EngineName, Promise<string | null>>();

/** The engine's URL (Redis, MongoDB) or broker list (Kafka, `host:port[,host:port]`), or null. */
export function resolveEngine(engine: EngineName): Promise<string | null> {
  const fromEnv = process.env[envVar[engine]]?.trim();
  if (fromEnv) return Promise.resolve(fromEnv);
  let endpoint = started.get(engine);
  if (!endpoint) {
    endpoint = startContainer(engine);
    started.set(engine, endpoint);
  }
  return endpoint;
}

/** Marks the suite being collected (call inside a `describe` factory). */
export function recordRequirement(requirement: SuiteRequirement): void {
  const suite = TestRunner.getCurrentSuite().suite;
  if (suite) (suite.meta as Record<string, unknown>)[REQUIREMENT_META_KEY] = requirement;
}

/**
 * Kafka adapter timings for tests on a real broker: group joins, leaves and rebalances take a second
 * or two (the adapter's production defaults: session 10 s, rebalance 10 s), redelivery backs off
 * from 20 ms. Spread into `createKafkaEventBus`; override `consumer.maxWaitTimeInMs` where a suite
 * wants a shorter fetch wait.
 */
export const FAST_KAFKA_TIMINGS = {
  consumer: { sessionTimeout: 6_000, heartbeatInterval: 300, rebalanceTimeout: 5_000, maxWaitTimeInMs: 50 },
  retryBackoff: { initialMs: 20, maxMs: 200 },
};

/** Kafka broker list as the array kafkajs wants. */
export const brokerList = (brokers: string): string[] =>
  brokers
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean);

/**
 * `describe` with a resolved engine endpoint. Without one: under CI a failing test (a missing
 * engine must never pass silently), elsewhere a skipped suite with a loud warning.
 */
export function describeWithEngine(engine: EngineName, name: string, fn: (endpoint: string) => void): void {
  describe(name, async () => {
    const endpoint = await resolveEngine(engine);
    if (endpoint) {
      recordRequirement({ kind: 'engine', name: engine, ran: true, enable: ENGINES_UP });
      fn(endpoint);
      return;
    }
    recordRequirement({
      kind: 'engine',
      name: engine,
      ran: false,
      reason: `${envVar[engine]} not set and no Docker engine for testcontainers`,
      enable: ENGINES_UP,
    });
    const reason =
      `engine ${engine} not configured: set ${envVar[engine]} (${ENGINES_UP}) ` +
      'or make a Docker engine reachable for testcontainers';
    if (process.env.CI) {
      it(`engine ${engine} is available`, () => {
        throw new Error(`engine ${engine} not configured in CI: ${reason}`);
      });
      return;
    }
    console.warn(`\n*** SKIPPING integration suite "${name}": ${reason} ***\n`);
    describe.skip(`${name} (no ${engine} engine)`, () => fn('unavailable'));
  });
}

async function dockerReachable(): Promise<boolean> {
  if (!process.env.DOCKER_HOST && !existsSync('/var/run/docker.sock')) return false;
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

async function startContainer(engine: EngineName): Promise<string | null> {
  if (!(await dockerReachable())) return null;
  const { GenericContainer, Wait } = await import('testcontainers');
  switch (engine) {
    case 'redis': {
      const c = await new GenericContainer('redis:7')
        .withExposedPorts(6379)
        .withWaitStrategy(Wait.forLogMessage('Ready to accept connections'))
        .start();
      return `redis://127.0.0.1:${c.getMappedPort(6379)}`;
    }
    case 'mongo': {
      const c = await new GenericContainer('mongo:7')
        .withExposedPorts(27017)
        .withWaitStrategy(Wait.forLogMessage(/Waiting for connections/))
        .start();
      return `mongodb://127.0.0.1:${c.getMappedPort(27017)}/`;
    }
    case 'kafka': {
      // Kafka advertises the address clients must dial back, so the container listens on the same
      // port number that is mapped on the host.
      const port = await freePort();
      const c = await new GenericContainer('apache/kafka:3.9.0')
        .withExposedPorts({ container: port, host: port })
        .withEnvironment({
          KAFKA_NODE_ID: '1',
          KAFKA_PROCESS_ROLES: 'broker,controller',
          KAFKA_LISTENERS: `PLAINTEXT://0.0.0.0:${port},CONTROLLER://0.0.0.0:9093`,
          KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://127.0.0.1:${port}`,
          KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
          KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
          KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
          KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
          KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
          KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
          KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
          KAFKA_NUM_PARTITIONS: '3',
        })
        .withWaitStrategy(Wait.forLogMessage(/Kafka Server started/))
        .start();
      return `127.0.0.1:${c.getMappedPort(port)}`;
    }
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}
