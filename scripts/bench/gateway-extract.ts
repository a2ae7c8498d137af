/**
 * Throughput of cached POST /api/v1/extract through the full gateway path against a bare fastify
 * route returning the same JSON, measured in the same run with autocannon.
 *
 *   node_modules/.bin/node scripts/bench/gateway-extract.ts [--duration 10] [--connections 50] [--segments 200]
 *
 * Full path: real access module (API-key hash lookup + key cache, daily rate-limit counter,
 * rate-limit headers) on the embedded in-memory adapters, schema validation, URL parsing, a real gRPC
 * call over loopback to an extractor that answers from its cache (cached: true), the JSON mapping
 * and serialisation. The servers run in one child process (the embedded one-process shape); the load
 * generator runs in this process so it does not compete for the servers' event loop.
 * Target: full path >= 40% of the bare route's requests/s, with p99 < 20 ms at 50 connections.
 */
import { fork } from 'node:child_process';
import * as grpc from '@grpc/grpc-js';
import autocannon from 'autocannon';
import Fastify from 'fastify';
import { commonV1, extractorV1 } from '@subx/contracts';
import {
  createInMemoryDocumentStore,
  createInMemoryKeyValueStore,
  createInProcessEventBus,
  systemClock,
} from '@subx/ports';
import { createHealthServer } from '@subx/service-kit';
import { createAccessModule, loadAccessConfig } from '../../services/gateway/src/access/index.ts';
import { buildApp } from '../../services/gateway/src/app.ts';
import { grpcBackendsFromConfig } from '../../services/gateway/src/backends/grpc.ts';
import { loadConfig } from '../../services/gateway/src/config.ts';
import { createDirectFanOut } from '../../services/gateway/src/fanout/direct.ts';

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const DURATION = arg('duration', 10);
const CONNECTIONS = arg('connections', 50);
const SEGMENTS = arg('segments', 200);
const VIDEO_ID = 'dQw4w9WgXcQ';
/** Profiling aid: load only the full path (the bare run shrinks to 1 s). */
const ONLY_FULL = args.includes('--only-full');
/**
 * The extractor in a process of its own, as in compose and Kubernetes (and the gRPC hop then costs
 * a second event loop instead of the gateway's); default: one process, the `npm start` shape.
 */
const SPLIT = args.includes('--split');

async function forkExtractor(): Promise<number> {
  const child = fork(new URL(import.meta.url).pathname, ['serve-extractor', ...args], {
    execArgv: process.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  process.on('exit', () => child.kill());
  return new Promise<number>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`extractor process exited with ${code}`)));
  });
}

interface Ready {
  gatewayPort: number;
  barePort: number;
  grpcPort: number;
  apiKey: string;
}

/** The extractor: fetches once, then answers from its cache, like the real one. */
async function startExtractor(): Promise<number> {
  const cache = new Map<string, extractorV1.GetTranscriptResponse>();
  const server = new grpc.Server();
  const impl: extractorV1.ExtractorServiceServer = {
    getTranscript(call, callback) {
      const key = `${call.request.videoId}:${call.request.language}`;
      const hit = cache.get(key);
      if (hit) return callback(null, hit);
      const fresh: extractorV1.GetTranscriptResponse = {
        videoId: call.request.videoId,
        language: call.request.language,
        subtitleType: commonV1.SubtitleType.SUBTITLE_TYPE_MANUAL,
        segments: Array.from({ length: SEGMENTS }, (_, i) => ({
          text: `This is subtitle line number ${i} of the benchmark video`,
          start: i * 3,
          duration: 3,
        })),
        metadata: {
          title: 'Benchmark video',
          channel: 'Bench',
          channelId: 'UCbench',
          duration: SEGMENTS * 3,
          uploadDate: '20240101',
          thumbnailUrl: `https://i.ytimg.com/vi/${VIDEO_ID}/hqdefault.jpg`,
        },
        cached: false,
        fetchedAt: new Date().toISOString(),
      };
      cache.set(key, { ...fresh, cached: true });
      callback(null, fresh);
    },
    validateVideo: (_call, callback) => callback({ code: grpc.status.UNIMPLEMENTED }),
    getPlaylist: (_call, callback) => callback({ code: grpc.status.UNIMPLEMENTED }),
  };
  server.addService(extractorV1.ExtractorServiceService, impl);
  createHealthServer({ '': 'SERVING' }).addTo(server);
  const grpcPort = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  return grpcPort;
}

async function serve(): Promise<void> {
  const silent = { info() {}, warn() {}, error() {}, debug() {} };
  const grpcPort = SPLIT ? await forkExtractor() : await startExtractor();

  const kv = createInMemoryKeyValueStore({ clock: systemClock });
  const { config: accessConfig } = loadAccessConfig(
    { ACCESS_PRICING_JSON: JSON.stringify({ dailyLimit: { pro: 1_000_000_000 } }) },
    { embedded: true },
  );
  const access = createAccessModule({
    store: createInMemoryDocumentStore(),
    kv,
    bus: createInProcessEventBus(),
    clock: systemClock,
    config: accessConfig,
    logger: silent,
  });
  await access.start();
  const { apiKey } = await access.accounts.createAccount({ tier: 'pro', credits: 1000 });
  const config = loadConfig({ EXTRACTOR_GRPC_ADDR: `127.0.0.1:${grpcPort}` });
  const backends = grpcBackendsFromConfig(config);
  const gateway = await buildApp({
    config,
    access: access.access,
    credits: access.credits,
    idempotency: access.idempotency,
    ipLimiter: access.ipLimiter,
    backends,
    fanOut: createDirectFanOut({ extractor: backends.extractor, concurrency: 10 }),
    kv,
    clock: systemClock,
    pricing: accessConfig.pricing,
  });
  const gatewayAddress = await gateway.listen({ host: '127.0.0.1', port: 0 });

  // Warm the extractor cache and capture the exact JSON the full path returns.
  const sample = await fetch(`${gatewayAddress}/api/v1/extract`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body: JSON.stringify({ url: `https://www.youtube.com/watch?v=${VIDEO_ID}` }),
  });
  const sampleBody = (await sample.json()) as Record<string, unknown>;
  if (sample.status !== 200)
    throw new Error(`warm-up failed: ${sample.status} ${JSON.stringify(sampleBody)}`);

  const bare = Fastify();
  bare.post('/api/v1/extract', async () => sampleBody);
  await bare.listen({ host: '127.0.0.1', port: 0 });

  const ready: Ready = {
    gatewayPort: (gateway.server.address() as { port: number }).port,
    barePort: (bare.server.address() as { port: number }).port,
    grpcPort,
    apiKey,
  };
  process.send?.(ready);
  // A normal exit (not death by signal), so `--cpu-prof` can write its profile.
  process.on('disconnect', () => process.exit(0));
  process.on('SIGTERM', () => process.exit(0));
}

interface Measured {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  bytes: number;
}

async function load(
  name: string,
  port: number,
  headers: Record<string, string>,
  duration: number,
): Promise<Measured> {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/api/v1/extract`,
    method: 'POST',
    connections: CONNECTIONS,
    duration,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ url: `https://www.youtube.com/watch?v=${VIDEO_ID}` }),
  });
  return {
    name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    bytes: result.throughput.average,
  };
}

/**
 * The ceiling of any path with this gRPC hop: cached GetTranscript calls alone, CONNECTIONS at a
 * time, from this process (like autocannon's HTTP load) to the same extractor the gateway uses.
 */
async function grpcAlone(port: number, duration: number): Promise<Measured> {
  const client = new extractorV1.ExtractorServiceClient(
    `127.0.0.1:${port}`,
    grpc.credentials.createInsecure(),
  );
  const request = { videoId: VIDEO_ID, language: 'en', include: [], forceRefresh: false, translate: false };
  const call = () =>
    new Promise<number>((resolve, reject) => {
      const t0 = performance.now();
      client.getTranscript(request, (err) => (err ? reject(err) : resolve(performance.now() - t0)));
    });
  for (let i = 0; i < 200; i++) await call();
  const latencies: number[] = [];
  const end = performance.now() + duration * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < end) latencies.push(await call());
    }),
  );
  client.close();
  latencies.sort((a, b) => a - b);
  const pct = (q: number) =>
    Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0);
  return {
    name: 'gRPC GetTranscript alone (ceiling of the full path)',
    rps: latencies.length / duration,
    p50: pct(0.5),
    p99: pct(0.99),
    non2xx: 0,
    errors: 0,
    bytes: 0,
  };
}

async function main(): Promise<void> {
  const child = fork(new URL(import.meta.url).pathname, ['serve', ...args], {
    execArgv: process.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await new Promise<Ready>((resolve, reject) => {
    child.once('message', (m) => resolve(m as Ready));
    child.once('exit', (code) => reject(new Error(`server process exited with ${code}`)));
  });
  try {
    const auth = { 'x-api-key': ready.apiKey };
    // Warm-up of both (JIT, connection pools), then the measured runs.
    await load('warm-up bare', ready.barePort, {}, 2);
    await load('warm-up full', ready.gatewayPort, auth, 2);
    const bare = await load('bare fastify route', ready.barePort, {}, ONLY_FULL ? 1 : DURATION);
    const full = await load(
      'full path (auth, rate limit, gRPC, cache, format)',
      ready.gatewayPort,
      auth,
      DURATION,
    );
    const ceiling = ONLY_FULL ? undefined : await grpcAlone(ready.grpcPort, DURATION);
    const ratio = full.rps / bare.rps;
    console.log(
      `\ncached POST /api/v1/extract, ${SEGMENTS} segments, ${CONNECTIONS} connections, ${DURATION} s each, ` +
        `extractor ${SPLIT ? 'in its own process (--split)' : 'in the gateway process'}\n`,
    );
    console.log('| run | requests/s | p50 ms | p99 ms | non-2xx | errors |');
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const r of ceiling ? [bare, full, ceiling] : [bare, full]) {
      console.log(`| ${r.name} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${r.errors} |`);
    }
    const okRatio = ratio >= 0.4;
    const okP99 = full.p99 < 20;
    console.log(
      `\nratio full / bare: ${(ratio * 100).toFixed(1)}% (target >= 40%: ${okRatio ? 'met' : 'NOT met'})`,
    );
    console.log(`full-path p99: ${full.p99} ms (target < 20 ms: ${okP99 ? 'met' : 'NOT met'})`);
    if (ceiling) {
      console.log(
        `gRPC hop alone / bare: ${((ceiling.rps / bare.rps) * 100).toFixed(1)}% ` +
          '(no path through this hop can beat it; full path / gRPC alone: ' +
          `${((full.rps / ceiling.rps) * 100).toFixed(1)}%)`,
      );
    }
    if (full.non2xx > 0 || full.errors > 0) console.log('WARNING: the full path answered non-2xx or errors');
    process.exitCode = okRatio && okP99 && full.non2xx === 0 ? 0 : 1;
  } finally {
    child.kill();
  }
}

if (args[0] === 'serve') await serve();
else if (args[0] === 'serve-extractor') {
  process.send?.({ port: await startExtractor() });
  process.on('disconnect', () => process.exit(0));
} else await main();
