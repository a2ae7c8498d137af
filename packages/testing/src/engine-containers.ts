/**
 * Engines through testcontainers, for machines with a Docker engine and no REDIS_URL /
 * KAFKA_BROKERS / MONGO_URL (packages/testing/src/engines.ts). The images are the ones
 * docker-compose.yml runs — redis:7, apache/kafka:4.2.0, mongo:7 — taken from the local image store
 * first (where no registry answers, `bash scripts/containers.sh stand-ins` builds them there under
 * those names: Debian's Redis, Kafka from Maven Central, FerretDB), pulled otherwise. When an image
 * is neither local nor pullable, the engine is unavailable with a reason naming the image, the
 * cause and the command that provides it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { freePort } from './free-port.ts';

export type ContainerEngine = 'redis' | 'kafka' | 'mongo';

/** Builds the engine images locally where no image registry answers. */
export const CONTAINERS_STAND_INS = 'bash scripts/containers.sh stand-ins';

export const ENGINE_IMAGES: Record<ContainerEngine, string> = {
  redis: 'redis:7',
  kafka: 'apache/kafka:4.2.0',
  mongo: 'mongo:7',
};

/** What the engine fixtures got: an endpoint, or why not (null: no Docker engine at all). */
export type ContainerOutcome = { endpoint: string; via: string } | { endpoint: null; reason: string | null };

const PULL_TIMEOUT_MS = 60_000;
const START_TIMEOUT_MS = 120_000;
const ENGINE_LABEL = 'org.subx.testing.engine';
const LABEL = ENGINE_LABEL;
const PID_LABEL = 'org.subx.testing.pid';
/** The test run a container belongs to (`SUBX_TEST_RUN`, set by the run's global setup). */
export const RUN_LABEL = 'org.subx.testing.run';
/** The environment variable naming this test run (containers-teardown.ts sets it for every worker). */
export const RUN_ENV = 'SUBX_TEST_RUN';
const startedIds: string[] = [];
/** Signals that end a worker without its 'exit' event: its containers go first, then it ends as asked. */
const ENDING_SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

async function dockerClient() {
  if (!process.env.DOCKER_HOST && !existsSync('/var/run/docker.sock')) return null;
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    return await getContainerRuntimeClient();
  } catch {
    return null;
  }
}

/** Local image, else a pull bounded in time; the error text when neither works. */
async function ensureImage(image: string): Promise<string | null> {
  try {
    execFileSync('docker', ['image', 'inspect', image], { stdio: 'ignore', timeout: 15_000 });
    return null;
  } catch {
    // not in the local store: try the registry
  }
  try {
    execFileSync('docker', ['pull', '-q', image], { stdio: 'pipe', timeout: PULL_TIMEOUT_MS });
    return null;
  } catch (error) {
    const stderr = String((error as { stderr?: Buffer }).stderr ?? '').trim();
    const cause = stderr.split('\n').pop() || (error as Error).message;
    return `image ${image} is not in the local image store and cannot be pulled (${cause})`;
  }
}

// Without Ryuk (its image cannot be pulled where no registry answers) nothing would remove the
// containers of a finished test process: they are removed when it exits, and a worker that was
// killed instead leaves them to the next start, which removes those of processes no longer alive.
function removeStale(): void {
  let rows: string[];
  try {
    rows = execFileSync(
      'docker',
      ['ps', '-a', '--filter', `label=${LABEL}`, '--format', `{{.ID}} {{.Label "${PID_LABEL}"}}`],
      {
        encoding: 'utf8',
        timeout: 15_000,
      },
    )
      .split('\n')
      .filter(Boolean);
  } catch {
    return;
  }
  const stale = rows
    .map((row) => row.split(' '))
    .filter(([, pid]) => !pidAlive(Number(pid)))
    .map(([id]) => id!);
  if (stale.length)
    execFileSync('docker', ['rm', '-f', '-v', ...stale], { stdio: 'ignore', timeout: 30_000 });
}

function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function removeStarted(): void {
  if (startedIds.length === 0) return;
  try {
    execFileSync('docker', ['rm', '-f', '-v', ...startedIds.splice(0)], { stdio: 'ignore', timeout: 30_000 });
  } catch {
    // already gone
  }
}

/**
 * The container goes when this process ends: on 'exit', and on a signal that would end it without
 * 'exit' (a worker stopped by its runner), after which the signal ends the process as it would
 * have. A SIGKILL leaves it to the run's teardown (containers-teardown.ts) and the next start.
 */
export function removeOnExit(id: string): void {
  if (startedIds.length === 0) {
    process.once('exit', removeStarted);
    for (const signal of ENDING_SIGNALS) {
      process.once(signal, () => {
        removeStarted();
        process.kill(process.pid, signal);
      });
    }
  }
  startedIds.push(id);
}

/** `image`: another image of the same engine (the tests name one that does not exist). */
export async function startEngineContainer(
  engine: ContainerEngine,
  image = ENGINE_IMAGES[engine],
): Promise<ContainerOutcome> {
  if (!(await dockerClient())) return { endpoint: null, reason: null };
  removeStale();
  const missing = await ensureImage(image);
  if (missing) return { endpoint: null, reason: missing };
  try {
    execFileSync('docker', ['image', 'inspect', 'testcontainers/ryuk:0.14.0'], {
      stdio: 'ignore',
      timeout: 15_000,
    });
  } catch {
    process.env.TESTCONTAINERS_RYUK_DISABLED ??= 'true';
  }
  const { GenericContainer, Wait } = await import('testcontainers');
  const base = new GenericContainer(image)
    .withLabels({
      [LABEL]: engine,
      [PID_LABEL]: String(process.pid),
      ...(process.env[RUN_ENV] ? { [RUN_LABEL]: process.env[RUN_ENV] } : {}),
    })
    .withStartupTimeout(START_TIMEOUT_MS)
    .withPullPolicy({ shouldPull: () => false });
  const via = `testcontainers ${image}`;
  switch (engine) {
    case 'redis': {
      const c = await base
        .withExposedPorts(6379)
        .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
        .start();
      removeOnExit(c.getId());
      return { endpoint: `redis://127.0.0.1:${c.getMappedPort(6379)}`, via };
    }
    case 'mongo': {
      const c = await base
        .withExposedPorts(27017)
        // mongod says "Waiting for connections"; FerretDB (the stand-in) "Listening on".
        .withWaitStrategy(Wait.forLogMessage(/Waiting for connections|Listening on/))
        .start();
      removeOnExit(c.getId());
      return { endpoint: `mongodb://127.0.0.1:${c.getMappedPort(27017)}/`, via };
    }
    case 'kafka': {
      // Kafka advertises the address clients must dial back, so the container listens on the same
      // port number that is mapped on the host.
      const port = await freePort();
      const c = await base
        .withExposedPorts({ container: port, host: port })
        .withEnvironment({
          CLUSTER_ID: '5L6g3nShT-eMCtK--X86sw',
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
      removeOnExit(c.getId());
      return { endpoint: `127.0.0.1:${c.getMappedPort(port)}`, via };
    }
  }
}
