/**
 * The fault suite's system under test: the real `npm start` launcher (scripts/start-embedded.ts)
 * as a child process, pointed at engines and a fake platform that each test owns, so breaking
 * them never disturbs another suite.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { startFakeYouTube } from '@subx/testing/fake-youtube';
import { freePort } from '@subx/testing/free-port';
import { waitFor } from '@subx/testing/wait';
import { startNpmStart, type NpmStartProcess } from '../npm-start-process.ts';
import { syntheticVideos } from '../support.ts';

export const root = fileURLToPath(new URL('../../../', import.meta.url));
const ADMIN_TOKEN = 'fault-suite-admin-token-0123456789';

/**
 * Whether `java` runs here, for the suites that start their own Kafka with scripts/engines.sh; under
 * CI its absence is an error, never a skipped suite.
 */
export function javaForKafka(): boolean {
  const available = spawnSync('java', ['-version'], { stdio: 'ignore' }).status === 0;
  if (!available && process.env.CI)
    throw new Error('java is not on PATH: scripts/engines.sh cannot start Kafka');
  return available;
}

/** scripts/engines.sh with a private ENGINES_DIR (suites that stop their engines own them); its stdout. */
export function engines(dir: string, ...args: string[]): string {
  const run = spawnSync('bash', ['scripts/engines.sh', ...args], {
    cwd: root,
    env: { ...process.env, ENGINES_DIR: dir },
    encoding: 'utf8',
    timeout: 180_000,
  });
  if (run.status !== 0) throw new Error(`engines.sh ${args.join(' ')} failed:\n${run.stderr}`);
  return run.stdout;
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
export const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1', () => (socket.destroy(), resolve(true)));
    socket.on('error', () => resolve(false));
  });

export type RunningSystem = NpmStartProcess;

/** Starts `npm start` with `env` over an embedded default (no engines, silent-ish logs). */
export function startSystem(env: Record<string, string>, timeoutMs = 60_000): Promise<RunningSystem> {
  return startNpmStart({ ADMIN_TOKEN, ...env }, timeoutMs, { killAfterMs: 15_000 });
}

/** A request with its wall time; the request itself is bounded by `abortAfterMs` (a hang fails). */
export async function timedFetch(
  url: string,
  init: RequestInit = {},
  abortAfterMs = 20_000,
): Promise<{ ms: number; status: number; body: Record<string, unknown>; headers: Headers }> {
  const t0 = performance.now();
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(abortAfterMs) });
  const text = await res.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { raw: text };
  }
  return { ms: performance.now() - t0, status: res.status, body, headers: res.headers };
}

export const jsonPost = (apiKey: string, body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
  body: JSON.stringify(body),
});

/** One service's main.ts as a child process; its output kept (bounded) for failure messages. */
function launch(entry: string, env: Record<string, string>): { child: ChildProcess; output: () => string } {
  let output = '';
  const child = spawn(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', entry],
    // /metrics on a free port: suites run in parallel
    {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: 'warn', METRICS_PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const keep = (d: Buffer) => (output = (output + d.toString()).slice(-100_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return { child, output: () => output };
}

async function kill(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  // A graceful stop gets 20 s (the services' own shutdown bound is 10 s), then SIGKILL.
  const timer = setTimeout(() => {
    console.warn(`pid ${child.pid} ignored ${signal} for 20 s: SIGKILL (${child.spawnargs.at(-1)})`);
    child.kill('SIGKILL');
  }, 20_000);
  await exited;
  clearTimeout(timer);
}

export interface SplitSystem {
  base: string;
  /** The admin listener (Bearer ADMIN_TOKEN; `admin()` sends it). */
  adminUrl: string;
  /** The watch URLs of the synthetic videos the system was started with. */
  urls: string[];
  /** POSTs a batch of `urls` (1 to 10); bounded by 90 s. */
  batch(urls: string[]): ReturnType<typeof timedFetch>;
  /** 'ok' or the error code, per item. */
  codes(res: Awaited<ReturnType<typeof timedFetch>>): string[];
  /** A call to the admin API (JSON body when given); bounded by 20 s. */
  admin(method: string, path: string, body?: unknown): ReturnType<typeof timedFetch>;
  startExtractor(): void;
  killExtractor(): Promise<void>;
  /** SIGTERM, as a scale-in does: its workers finish what they hold, then it exits (bounded). */
  stopExtractor(): Promise<void>;
  /** Starts the gateway again on the same ports; resolves once it answers /health/live. */
  startGateway(): Promise<void>;
  /** SIGKILL: no graceful stop. */
  killGateway(): Promise<void>;
  /** Starts the job service again on the same port (it shares state only through `mongoUrl`). */
  startJobService(): void;
  /** SIGKILL: no graceful stop, its job leases are not given back. */
  killJobService(): Promise<void>;
  /** SIGTERM, as a scale-in does: its runner records what is in flight and gives its leases back. */
  stopJobService(): Promise<void>;
  /** The output every process has written so far (bounded), for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Gateway, job service and extractor as separate processes (their own main.ts) on the Kafka at `brokers`, with
 * topics and groups of their own (batch and bulk jobs, job events, usage), so a shared broker's other
 * users are not disturbed, and a fake platform serving `videoCount` synthetic videos, each answer
 * `latencyMs` late. With `mongoUrl` the gateway keeps accounts, balances and jobs in a database of
 * its own on that server (`fault_<random>`, left there: point it at a throwaway server), shared by
 * the gateway and the job service, so its state survives `killGateway()` and `killJobService()`;
 * without, in memory (and jobs, which need the shared store, do not work). `gatewayEnv` comes last
 * for both (JOBS_* settings).
 * Resolves once a batch of (up to 10 of) the videos went through.
 */
export async function startSplitSystem(options: {
  brokers: string;
  videoCount: number;
  prefix: string;
  mongoUrl?: string;
  latencyMs?: number;
  gatewayEnv?: Record<string, string>;
}): Promise<SplitSystem> {
  const id = Math.random().toString(36).slice(2, 10);
  const videos = syntheticVideos(options.videoCount, options.prefix);
  const youtube = await startFakeYouTube({ routes: videos.routes, latencyMs: options.latencyMs ?? 0 });
  const ports = {
    extractor: await freePort(),
    gateway: await freePort(),
    admin: await freePort(),
    jobs: await freePort(),
  };
  const kafkaEnv = {
    KAFKA_BROKERS: options.brokers,
    EXTRACT_JOBS_TOPIC: `t.fault.jobs.${id}`,
    EXTRACT_RESULTS_TOPIC: `t.fault.results.${id}`,
    // The bulk workers too, or every run would join one shared group on the default topic.
    EXTRACT_BULK_JOBS_TOPIC: `t.fault.bulk-jobs.${id}`,
    EXTRACT_BULK_WORKERS_GROUP: `fault-bulk-workers-${id}`,
  };
  let extractor: ReturnType<typeof launch> | undefined;
  const startExtractor = () => {
    extractor = launch('services/extractor/src/main.ts', {
      ...kafkaEnv,
      GRPC_PORT: String(ports.extractor),
      GRPC_HOST: '127.0.0.1',
      KAFKA_GROUP_ID: `fault-workers-${id}`,
      KAFKA_CLIENT_ID: `fault-extractor-${id}`,
      EXTRACT_WORKER_MEMBERS: '1',
      YOUTUBE_BASE_URL: youtube.url,
      YOUTUBE_RETRY_BASE_MS: '1',
      REDIS_URL: '',
    });
  };
  startExtractor();
  // Jobs, watches and webhooks: the job service, on the gateway's store and topics.
  const stateEnv = {
    API_KEY_PEPPER: 'fault-suite-pepper-0123456789-abcdefghij',
    REDIS_URL: '',
    MONGO_URL: options.mongoUrl ?? '',
    MONGO_DB: `fault_${id}`,
    JOB_EVENTS_TOPIC: `t.fault.job-events.${id}`,
    CREDIT_USAGE_TOPIC: `t.fault.credit-usage.${id}`,
    REQUEST_USAGE_TOPIC: `t.fault.request-usage.${id}`,
  };
  let jobService: ReturnType<typeof launch> | undefined;
  const startJobService = () => {
    jobService = launch('services/jobs/src/main.ts', {
      ...kafkaEnv,
      ...stateEnv,
      GRPC_PORT: String(ports.jobs),
      GRPC_HOST: '127.0.0.1',
      EXTRACTOR_GRPC_ADDR: `127.0.0.1:${ports.extractor}`,
      KAFKA_CLIENT_ID: `fault-jobs-${id}`,
      ...options.gatewayEnv,
    });
  };
  startJobService();
  const base = `http://127.0.0.1:${ports.gateway}`;
  const adminUrl = `http://127.0.0.1:${ports.admin}`;
  let gateway: ReturnType<typeof launch> | undefined;
  const startGateway = async () => {
    gateway = launch('services/gateway/src/main.ts', {
      ...kafkaEnv,
      PORT: String(ports.gateway),
      ADMIN_PORT: String(ports.admin),
      HOST: '127.0.0.1',
      EXTRACTOR_GRPC_ADDR: `127.0.0.1:${ports.extractor}`,
      JOBS_GRPC_ADDR: `127.0.0.1:${ports.jobs}`,
      EXTRACT_WORKERS_GROUP: `fault-workers-${id}`,
      KAFKA_CLIENT_ID: `fault-gateway-${id}`,
      ADMIN_TOKEN,
      ...stateEnv,
      ...options.gatewayEnv,
    });
    const started = gateway;
    try {
      await waitFor(async () => (await fetch(`${base}/health/live`).catch(() => null))?.status === 200, {
        timeoutMs: 60_000,
        intervalMs: 250,
        message: `${base}/health/live`,
      });
    } catch (error) {
      throw new Error(`gateway did not come up:\n${started.output()}`, { cause: error });
    }
  };
  await startGateway();
  const admin = (method: string, path: string, body?: unknown) =>
    timedFetch(`${adminUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  // The admin API has a listener of its own (ADMIN_PORT), never the public port.
  const created = await admin('POST', '/admin/v1/accounts', { tier: 'pro' });
  const apiKey = String(created.body.api_key);
  const batch = (urls: string[]) =>
    timedFetch(
      `${base}/api/v1/batch`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
        body: JSON.stringify({ urls }),
      },
      90_000,
    );
  const codes = (res: Awaited<ReturnType<typeof timedFetch>>) =>
    ((res.body.results ?? []) as { success: boolean; error_code?: string }[]).map((r) =>
      r.success ? 'ok' : (r.error_code ?? '?'),
    );
  const urls = videos.ids.map((v) => `https://youtu.be/${v}`);
  // The workers have joined once a batch goes through (a batch takes at most 10 URLs).
  await waitFor(async () => codes(await batch(urls.slice(0, 10))).every((c) => c === 'ok'), {
    timeoutMs: 60_000,
    intervalMs: 250,
    message: 'every batch item ok',
  });
  return {
    base,
    adminUrl,
    urls,
    batch,
    codes,
    admin,
    startExtractor,
    killExtractor: () => kill(extractor?.child, 'SIGKILL'),
    stopExtractor: () => kill(extractor?.child, 'SIGTERM'),
    startGateway,
    killGateway: () => kill(gateway?.child, 'SIGKILL'),
    startJobService,
    killJobService: () => kill(jobService?.child, 'SIGKILL'),
    stopJobService: () => kill(jobService?.child, 'SIGTERM'),
    output: () =>
      `--- gateway ---\n${gateway?.output() ?? ''}\n--- job service ---\n${jobService?.output() ?? ''}\n--- extractor ---\n${extractor?.output() ?? ''}`,
    async stop() {
      await kill(gateway?.child, 'SIGTERM');
      await kill(jobService?.child, 'SIGTERM');
      await kill(extractor?.child, 'SIGKILL');
      await youtube.close();
    },
  };
}
