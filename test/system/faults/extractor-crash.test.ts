/**
 * Issue 14 item 4 end to end: the gateway and the extractor as separate processes on a real Kafka
 * broker (own topics and groups: the shared broker's other users are not disturbed). The extractor
 * is SIGKILLed (no goodbye to its consumer group) and restarted at once, then killed for good.
 * Batches must neither stall for about a minute nor end as a page of TIMEOUTs: while no worker
 * holds the jobs the gateway runs them over gRPC, and with no extractor at all it answers at once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithEngine } from '@subx/testing/engines';
import { freePort } from '@subx/testing/faults';
import { startFakeYouTube, type FakeYouTube } from '@subx/testing/fake-youtube';
import { syntheticVideos } from '../support.ts';
import { ADMIN_TOKEN, root, timedFetch } from './support.ts';

// The batch deadline is 60 s; before the fix these batches took all of it (items TIMEOUT).
const BOUND_MS = 25_000;

function launch(entry: string, env: Record<string, string>): { child: ChildProcess; output: () => string } {
  let output = '';
  const child = spawn(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', '--disable-warning=TimeoutNegativeWarning', entry],
    { cwd: root, env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const keep = (d: Buffer) => (output = (output + d.toString()).slice(-100_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return { child, output: () => output };
}

async function until(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`not within ${timeoutMs} ms`);
}

async function kill(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}

describeWithEngine('kafka', 'fault: the extractor crashes and restarts under batch traffic', (brokers) => {
  const id = randomUUID().slice(0, 8);
  const videos = syntheticVideos(3, 'crashv');
  let youtube: FakeYouTube;
  let extractorPort: number;
  let extractor: ReturnType<typeof launch> | undefined;
  let gateway: ReturnType<typeof launch> | undefined;
  let base = '';
  let apiKey = '';
  const kafkaEnv = {
    KAFKA_BROKERS: brokers,
    EXTRACT_JOBS_TOPIC: `t.fault.jobs.${id}`,
    EXTRACT_RESULTS_TOPIC: `t.fault.results.${id}`,
  };

  const startExtractor = () => {
    extractor = launch('services/extractor/src/main.ts', {
      ...kafkaEnv,
      GRPC_PORT: String(extractorPort),
      GRPC_HOST: '127.0.0.1',
      KAFKA_GROUP_ID: `fault-workers-${id}`,
      KAFKA_CLIENT_ID: `fault-extractor-${id}`,
      EXTRACT_WORKER_MEMBERS: '1',
      YOUTUBE_BASE_URL: youtube.url,
      YOUTUBE_RETRY_BASE_MS: '1',
      REDIS_URL: '',
    });
  };
  const batch = () =>
    timedFetch(
      `${base}/api/v1/batch`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
        body: JSON.stringify({ urls: videos.ids.map((v) => `https://youtu.be/${v}`) }),
      },
      90_000,
    );
  const codes = (res: Awaited<ReturnType<typeof batch>>) =>
    (res.body.results as { success: boolean; error_code?: string }[]).map((r) =>
      r.success ? 'ok' : (r.error_code ?? '?'),
    );

  beforeAll(async () => {
    youtube = await startFakeYouTube({ routes: videos.routes });
    extractorPort = await freePort();
    startExtractor();
    const gatewayPort = await freePort();
    gateway = launch('services/gateway/src/main.ts', {
      ...kafkaEnv,
      PORT: String(gatewayPort),
      HOST: '127.0.0.1',
      EXTRACTOR_GRPC_ADDR: `127.0.0.1:${extractorPort}`,
      EXTRACT_WORKERS_GROUP: `fault-workers-${id}`,
      KAFKA_CLIENT_ID: `fault-gateway-${id}`,
      API_KEY_PEPPER: 'fault-suite-pepper-0123456789-abcdefghij',
      ADMIN_TOKEN,
      REDIS_URL: '',
      MONGO_URL: '',
    });
    base = `http://127.0.0.1:${gatewayPort}`;
    await until(async () => (await fetch(`${base}/health/live`).catch(() => null))?.status === 200, 60_000);
    const created = await timedFetch(`${base}/admin/v1/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify({ tier: 'pro' }),
    });
    apiKey = String(created.body.api_key);
    // The workers have joined once a batch goes through the bus.
    await until(async () => codes(await batch()).every((c) => c === 'ok'), 60_000);
  }, 150_000);

  afterAll(async () => {
    await kill(gateway?.child, 'SIGTERM');
    await kill(extractor?.child, 'SIGKILL');
    await youtube?.close();
  });

  it('killed and restarted at once: the next batch answers in seconds, every item extracted', async () => {
    await kill(extractor!.child, 'SIGKILL');
    startExtractor();
    // The restarted extractor serves gRPC again quickly; its worker still has to join the group.
    const res = await batch();
    expect(res.status).toBe(200);
    expect(res.ms).toBeLessThan(BOUND_MS);
    expect(codes(res)).toEqual(['ok', 'ok', 'ok']);
  }, 120_000);

  it('killed for good: the batch answers at once with retryable items, not after the deadline', async () => {
    await kill(extractor!.child, 'SIGKILL');
    const res = await batch();
    expect(res.ms).toBeLessThan(BOUND_MS);
    expect(res.status).toBe(200);
    expect(codes(res)).toEqual(['SERVICE_UNAVAILABLE', 'SERVICE_UNAVAILABLE', 'SERVICE_UNAVAILABLE']);
  }, 120_000);
});
