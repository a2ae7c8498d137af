/**
 * Image sizes and cold start-to-ready per service, for the README ("Containers").
 *
 *   bash scripts/containers.sh up && node scripts/bench/images.ts [--runs 3]
 *
 * Size: `docker image inspect` (uncompressed, all layers). Start-to-ready: `docker run` of the
 * image as the Helm chart runs it (uid 1000, read-only root, no capabilities), attached to the
 * running compose stack's network with the configuration of the stack's container of that service,
 * until the chart's readiness probe answers (GET /health/ready, or grpc.health.v1 Check): the
 * median of --runs fresh containers. The third-party images (stand-ins here) get their sizes only.
 */
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
const runs = Math.max(1, Number(values.runs));
const TAG = process.env.SUBX_IMAGE_TAG ?? 'dev';
const PROJECT = process.env.COMPOSE_PROJECT_NAME ?? 'subx';
const SERVICES = ['gateway', 'extractor', 'comments', 'ai', 'billing', 'jobs', 'dashboard'];
const HTTP: Record<string, number> = { gateway: 8080, dashboard: 8090 };
const THIRD_PARTY = [
  'node:24-slim',
  'redis:7',
  'apache/kafka:4.2.0',
  'mongo:7',
  'prom/prometheus:v3.16.0',
  'otel/opentelemetry-collector-contrib:0.128.0',
  `subx/demo-youtube:${TAG}`,
];
const READY_TIMEOUT_MS = 120_000;

const docker = (...args: string[]): string =>
  execFileSync('docker', args, {
    encoding: 'utf8',
    timeout: 60_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;
const size = (image: string) => Number(docker('image', 'inspect', '-f', '{{.Size}}', image));

function sourceContainer(service: string): string {
  const id = docker(
    'ps',
    '-q',
    '--filter',
    `label=com.docker.compose.project=${PROJECT}`,
    '--filter',
    `label=com.docker.compose.service=${service}`,
  ).split('\n')[0];
  if (!id)
    throw new Error(
      `no running ${service} container of compose project ${PROJECT}: run bash scripts/containers.sh up first`,
    );
  return id;
}

function ready(id: string, service: string): boolean {
  const port = HTTP[service];
  const script = port
    ? `fetch('http://127.0.0.1:${port}/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))`
    : null;
  try {
    if (script) docker('exec', id, 'node', '-e', script);
    else
      docker(
        'exec',
        id,
        'node',
        '--disable-warning=ExperimentalWarning',
        '/app/deploy/docker/healthcheck.ts',
      );
    return true;
  } catch {
    return false;
  }
}

function startToReady(service: string): number {
  const source = sourceContainer(service);
  const env = JSON.parse(docker('inspect', '-f', '{{json .Config.Env}}', source)) as string[];
  const network = docker(
    'inspect',
    '-f',
    '{{range $k, $v := .NetworkSettings.Networks}}{{$k}}{{end}}',
    source,
  );
  const t0 = performance.now();
  const id = docker(
    'run',
    '-d',
    '--user',
    '1000:1000',
    '--read-only',
    '--tmpfs',
    '/tmp:size=64m',
    '--cap-drop',
    'ALL',
    '--security-opt',
    'no-new-privileges',
    '--no-healthcheck',
    '--network',
    network,
    ...env.flatMap((e) => ['-e', e]),
    `subx/${service}:${TAG}`,
  );
  try {
    while (!ready(id, service)) {
      if (performance.now() - t0 > READY_TIMEOUT_MS)
        throw new Error(`${service} not ready within ${READY_TIMEOUT_MS} ms`);
      execFileSync('sleep', ['0.2']);
    }
    return performance.now() - t0;
  } finally {
    docker('rm', '-f', id);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

console.log(`| image | size | cold start-to-ready (median of ${runs}) |`);
console.log('|---|---|---|');
for (const service of SERVICES) {
  const times = Array.from({ length: runs }, () => startToReady(service));
  console.log(
    `| subx/${service}:${TAG} | ${mb(size(`subx/${service}:${TAG}`))} | ${(median(times) / 1000).toFixed(1)} s |`,
  );
}
for (const image of THIRD_PARTY) console.log(`| ${image} | ${mb(size(image))} | – |`);
