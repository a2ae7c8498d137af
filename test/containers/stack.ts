/**
 * The container suite's view of the stack `bash scripts/containers.sh up` runs (compose project
 * `subx`, profiles demo + apps + observability + speech, YOUTUBE_BASE_URL at the demo platform,
 * TRANSCRIBE_BASE_URL at the speech engine). The suite
 * is the vitest project `containers`, which exists only with CONTAINERS=1 (vitest.config.ts):
 * `bash scripts/containers.sh test`, a step of .ci/run. A stack that is not running fails it.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../../', import.meta.url));
export const GATEWAY = `http://localhost:${process.env.GATEWAY_HOST_PORT ?? '8080'}`;
export const PROMETHEUS = `http://localhost:${process.env.PROMETHEUS_HOST_PORT ?? '9090'}`;
export const DASHBOARD = `http://localhost:${process.env.DASHBOARD_HOST_PORT ?? '8090'}`;
export const MONGO_URL = `mongodb://127.0.0.1:${process.env.MONGO_HOST_PORT ?? '27017'}/`;
export const MONGO_DB = process.env.MONGO_DB ?? 'subx';
const DEMO_API_KEY = 'sxk_v1_demoDemoDemoDemoDemoDemoDemoDemo';
export const DEMO_ACCOUNT_ID = 'acct_00000000000000000000000000de7a00';
const PROJECT = process.env.COMPOSE_PROJECT_NAME ?? 'subx';
const PROFILES = [
  '--profile',
  'demo',
  '--profile',
  'apps',
  '--profile',
  'observability',
  '--profile',
  'speech',
];

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], timeoutMs = 120_000): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      {
        cwd: root,
        timeout: timeoutMs,
        maxBuffer: 64 * 1024 * 1024,
        env: {
          ...process.env,
          COMPOSE_PROJECT_NAME: PROJECT,
          YOUTUBE_BASE_URL: 'http://demo-youtube:8079',
          TRANSCRIBE_BASE_URL: 'http://speech:8000/v1',
        },
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) || 1 : 0, stdout, stderr }),
    );
  });
}

/** The compose CLI scripts/containers.sh uses (CONTAINERS_COMPOSE), on the project's file. */
export async function compose(args: string[], timeoutMs?: number): Promise<Run> {
  const [file, ...pre] = (process.env.CONTAINERS_COMPOSE ?? 'docker compose').split(' ');
  const result = await run(
    file!,
    [...pre, '--project-directory', root, '-f', `${root}docker-compose.yml`, ...PROFILES, ...args],
    timeoutMs,
  );
  if (result.code !== 0)
    throw new Error(`compose ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result;
}

export async function docker(args: string[], timeoutMs?: number): Promise<string> {
  const result = await run('docker', args, timeoutMs);
  if (result.code !== 0)
    throw new Error(`docker ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

/** Container ids of a compose service (all replicas). */
export async function containersOf(service: string): Promise<string[]> {
  const { stdout } = await compose(['ps', '-q', service]);
  return stdout.split('\n').filter(Boolean);
}

export async function health(container: string): Promise<string> {
  return (
    await docker([
      'inspect',
      '-f',
      '{{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}',
      container,
    ])
  ).trim();
}

/** Polls `check` until it returns a value (not undefined) or `timeoutMs` passes. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 90_000,
  everyMs = 1_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${timeoutMs} ms${last ? ` (last error: ${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Waits until every replica of the services is healthy. */
export async function waitHealthy(services: string[], timeoutMs = 180_000): Promise<void> {
  await eventually(
    `healthy: ${services.join(', ')}`,
    async () => {
      for (const service of services) {
        const ids = await containersOf(service);
        if (ids.length === 0) return undefined;
        for (const id of ids) if ((await health(id)) !== 'healthy') return undefined;
      }
      return true;
    },
    timeoutMs,
    2_000,
  );
}

export async function api(
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${GATEWAY}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'x-api-key': DEMO_API_KEY, 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await response.text();
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    json = { text };
  }
  return { status: response.status, json };
}

/** A sample value of a Prometheus text exposition, summed over the lines matching all labels. */
export function metricSum(exposition: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** /metrics of one container, read from inside it (METRICS_PORT is not published). */
export async function containerMetrics(container: string): Promise<string> {
  return docker([
    'exec',
    container,
    'node',
    '-e',
    "fetch('http://127.0.0.1:9464/metrics').then(async (r) => process.stdout.write(await r.text()))",
  ]);
}
