import { TestRunner, describe, it } from 'vitest';
import { CONTAINERS_STAND_INS, startEngineContainer, type ContainerOutcome } from './engine-containers.ts';
import { ENGINES_UP, REQUIREMENT_META_KEY, type SuiteRequirement } from './requirements.ts';

export { ENGINES_UP, REQUIREMENT_META_KEY, type SuiteRequirement } from './requirements.ts';

/**
 * Real engines for integration tests, in order of preference:
 * 1. the environment: REDIS_URL, KAFKA_BROKERS (comma-separated host:port), MONGO_URL
 *    (`eval "$(bash scripts/engines.sh up)"` sets all three);
 * 2. a container started with testcontainers when a Docker engine is reachable (the images of
 *    docker-compose.yml: redis:7, apache/kafka:4.2.0 in KRaft mode, mongo:7 — local first, see
 *    engine-containers.ts), one per engine per test process;
 * 3. nothing: `describeWithEngine` skips loudly, naming the image, the cause and the command that
 *    turns it on, or fails under CI.
 */
export type EngineName = 'redis' | 'kafka' | 'mongo';

const envVar: Record<EngineName, string> = { redis: 'REDIS_URL', kafka: 'KAFKA_BROKERS', mongo: 'MONGO_URL' };

const started = new Map<EngineName, Promise<ContainerOutcome>>();

/** Where an engine came from, or why there is none. */
export type EngineResolution =
  { endpoint: string; via: string } | { endpoint: null; reason: string; enable: string };

/** The engine, with where it came from (the environment or testcontainers) or why there is none. */
export async function resolveEngineDetailed(engine: EngineName): Promise<EngineResolution> {
  const fromEnv = process.env[envVar[engine]]?.trim();
  if (fromEnv) return { endpoint: fromEnv, via: envVar[engine] };
  let outcome = started.get(engine);
  if (!outcome) {
    outcome = startEngineContainer(engine).catch((error: unknown) => ({
      endpoint: null,
      reason: `testcontainers could not start it: ${(error as Error).message.split('\n')[0]}`,
    }));
    started.set(engine, outcome);
  }
  const result = await outcome;
  if ('via' in result) return result;
  if (result.reason)
    return { endpoint: null, reason: result.reason, enable: `${CONTAINERS_STAND_INS} (or ${ENGINES_UP})` };
  return {
    endpoint: null,
    reason: `${envVar[engine]} not set and no Docker engine for testcontainers`,
    enable: ENGINES_UP,
  };
}

/** The engine's URL (Redis, MongoDB) or broker list (Kafka, `host:port[,host:port]`), or null. */
export async function resolveEngine(engine: EngineName): Promise<string | null> {
  return (await resolveEngineDetailed(engine)).endpoint;
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
    const resolved = await resolveEngineDetailed(engine);
    if ('via' in resolved) {
      recordRequirement({ kind: 'engine', name: engine, ran: true, enable: ENGINES_UP, via: resolved.via });
      fn(resolved.endpoint);
      return;
    }
    recordRequirement({
      kind: 'engine',
      name: engine,
      ran: false,
      reason: resolved.reason,
      enable: resolved.enable,
    });
    const reason = `engine ${engine} not available: ${resolved.reason}; turn it on with: ${resolved.enable}`;
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

/** Starts the schema registry (Apicurio Registry, in memory) natively and exports its URL. */
export const REGISTRY_UP = 'eval "$(bash scripts/engines.sh up registry)"';

/**
 * `describe` with a schema registry's Confluent-compatible URL (SCHEMA_REGISTRY_URL, which
 * `scripts/engines.sh up registry` exports). No container fallback: without the variable, a failing
 * test under CI and a loudly skipped suite elsewhere, as `describeWithEngine`.
 */
export function describeWithRegistry(name: string, fn: (url: string) => void): void {
  describe(name, () => {
    const url = process.env.SCHEMA_REGISTRY_URL?.trim();
    if (url) {
      recordRequirement({
        kind: 'engine',
        name: 'registry',
        ran: true,
        enable: REGISTRY_UP,
        via: 'SCHEMA_REGISTRY_URL',
      });
      fn(url);
      return;
    }
    const reason = 'SCHEMA_REGISTRY_URL not set';
    recordRequirement({ kind: 'engine', name: 'registry', ran: false, reason, enable: REGISTRY_UP });
    if (process.env.CI) {
      it('engine registry is available', () => {
        throw new Error(`engine registry not configured in CI: ${reason}; turn it on with: ${REGISTRY_UP}`);
      });
      return;
    }
    console.warn(
      `\n*** SKIPPING integration suite "${name}": ${reason}; turn it on with: ${REGISTRY_UP} ***\n`,
    );
    describe.skip(`${name} (no registry)`, () => fn('unavailable'));
  });
}
