/**
 * Throughput of cached POST /api/v1/extract through the full gateway path against a bare fastify
 * route returning the same JSON, measured in the same run with autocannon.
 *
 *   node_modules/.bin/node scripts/bench/gateway-extract.ts [--duration 10] [--connections 50]
 *     [--segments 200] [--videos 1] [--split]
 *   BENCH_DURATION_S=60 node_modules/.bin/node scripts/bench/gateway-extract.ts --split --videos 3000
 *
 * Full path: real access module (API-key hash lookup + key cache, daily rate-limit counter,
 * rate-limit headers) on the embedded in-memory adapters, schema validation, URL parsing, the
 * gateway's micro-cache of recent answers (src/domain/extract-cache.ts, default configuration) in front of
 * a real gRPC call over loopback to an extractor that answers from its cache (cached: true), the
 * JSON mapping and serialisation. The same run measures the breakdown: the bare route, the full
 * path with the micro-cache off (every request pays the gRPC hop, the path before the micro-cache), and
 * the gRPC hop alone. The servers run in child processes; the load generator runs in this process
 * so it does not compete for the servers' event loop.
 * Target: full path >= 40% of the bare route's requests/s, with p99 < 20 ms at 50 connections.
 *
 * Memory: every server process reports its RSS every 2 s; for the full-path run
 * the output gives, per process, the median RSS of the run's second and last quarter and the growth
 * between them. `--split` runs the extractor in its own process, so gateway and extractor are
 * reported apart (otherwise one process holds both). `--videos N` spreads the load over N videos
 * (round robin) so the micro-cache fills and evicts at its byte cap. Each measured run lasts
 * `--duration` seconds (default BENCH_DURATION_S, else 10): 60 for the memory check, less for a
 * quick look.
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
import { grpcBackendsFromConfig } from '@subx/backends';
import { loadConfig } from '../../services/gateway/src/config.ts';
import { createDirectFanOut } from '@subx/fanout';
import { upperMedian as median } from './lib/process-stats.ts';
import { reportResult } from './lib/result.ts';

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const DURATION = arg('duration', Number(process.env.BENCH_DURATION_S ?? 10));
const CONNECTIONS = arg('connections', 50);
const SEGMENTS = arg('segments', 200);
const VIDEOS = Math.max(1, arg('videos', 1));
const VIDEO_ID = 'dQw4w9WgXcQ';
/** The N video ids the load goes round (11 characters, the id alphabet). */
const videoIds = Array.from({ length: VIDEOS }, (_, i) =>
  i === 0 ? VIDEO_ID : `bench${i.toString(36).padStart(6, '0')}`,
);
const bodies = videoIds.map((id) => JSON.stringify({ url: `https://www.youtube.com/watch?v=${id}` }));
const RSS_SAMPLE_MS = 2_000;
/** Profiling aid: load only the full path (the bare run shrinks to 1 s). */
const ONLY_FULL = args.includes('--only-full');
/**
 * The extractor in a process of its own, as in compose and Kubernetes (and the gRPC hop then costs
 * a second event loop instead of the gateway's); default: one process, the `npm start` shape.
 */
const SPLIT = args.includes('--split');

type ProcessName = 'server' | 'extractor';
/** RSS samples per measured run and process. */
const rssSamples = new Map<string, Partial<Record<ProcessName, number[]>>>();
/** The run whose samples are being collected, if any. */
let sampling: string | null = null;
const children: ReturnType<typeof fork>[] = [];

/** A server child: resolves with its first (ready) message; later messages are RSS samples. */
async function forkServer<T>(name: ProcessName, role: string, extra: string[] = []): Promise<T> {
  const child = fork(new URL(import.meta.url).pathname, [role, ...extra, ...args], {
    execArgv: process.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  process.on('exit', () => child.kill());
  children.push(child);
  return new Promise<T>((resolve, reject) => {
    child.once('message', (m) => {
      child.on('message', (sample) => {
        if (!sampling) return;
        const run = rssSamples.get(sampling) ?? {};
        rssSamples.set(sampling, run);
        (run[name] ??= []).push((sample as { rss: number }).rss);
      });
      resolve(m as T);
    });
    child.once('exit', (code) => reject(new Error(`${name} process exited with ${code}`)));
  });
}

/** In a server child: report RSS to the parent every RSS_SAMPLE_MS. */
function reportRss(): void {
  setInterval(() => process.send?.({ rss: process.memoryUsage.rss() }), RSS_SAMPLE_MS).unref();
}

interface Ready {
  gatewayPort: number;
  uncachedGatewayPort: number;
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
        source: 'captions',
        audioSeconds: 0,
        fallbackReason: '',
        upstreamReason: '',
        segments: Array.from({ length: SEGMENTS }, (_, i) => ({
          text: `This is subtitle line number ${i} of the benchmark video`,
          start: i * 3,
          duration: 3,
          words: [],
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
        segmentsJson: '',
        segmentsJsonUtf8: Buffer.alloc(0),
        headJsonUtf8: Buffer.alloc(0),
      };
      cache.set(key, { ...fresh, cached: true });
      callback(null, fresh);
    },
    // deprecated, kept for gateways of the previous release: this gateway never calls it
    getTranscripts: (call) => call.emit('error', { code: grpc.status.UNIMPLEMENTED }),
    // the gateway sends concurrent transcript requests as batches on StreamTranscripts lanes, the
    // hop this benchmark measures
    streamTranscripts(call) {
      call.on('data', (message: extractorV1.StreamTranscriptsRequest) => {
        message.items.forEach((item, i) => {
          const request = extractorV1.GetTranscriptRequest.fromPartial(item.request ?? {});
          impl.getTranscript({ request } as never, (_err, value) => {
            // each answer alone (no `more`): what an extractor that does not group answers sends
            if (value) {
              call.write({ index: message.firstIndex + i, result: { $case: 'transcript', value }, more: [] });
            }
          });
        });
      });
      // Every item is answered as it is read (from the cache, or built at once): the call ends as
      // soon as the gateway half-closes it.
      call.on('end', () => call.end());
    },
    validateVideo: (_call, callback) => callback({ code: grpc.status.UNIMPLEMENTED }),
    getPlaylist: (_call, callback) => callback({ code: grpc.status.UNIMPLEMENTED }),
    listPlaylistVideos: (_call, callback) => callback({ code: grpc.status.UNIMPLEMENTED }),
    listChannelVideos: (_call, callback) => callback({ code: grpc.status.UNIMPLEMENTED }),
    search: (_call, callback) => callback({ code: grpc.status.UNIMPLEMENTED }),
    listSearchVideos: (_call, callback) => callback({ code: grpc.status.UNIMPLEMENTED }),
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
  const grpcPort = SPLIT ? arg('grpc-port', 0) : await startExtractor();

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
  const gatewayWith = async (env: Record<string, string>) => {
    const config = loadConfig({ EXTRACTOR_GRPC_ADDR: `127.0.0.1:${grpcPort}`, ...env });
    const backends = grpcBackendsFromConfig(config);
    const app = await buildApp({
      config,
      access: access.access,
      credits: access.credits,
      idempotency: access.idempotency,
      ipLimiter: access.ipLimiter,
      readLimiter: access.readLimiter,
      backends,
      fanOut: createDirectFanOut({ extractor: backends.extractor, concurrency: 10 }),
      kv,
      clock: systemClock,
      pricing: accessConfig.pricing,
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    return app;
  };
  // The production defaults (micro-cache on), and the same path with the micro-cache off.
  const gateway = await gatewayWith({});
  const uncached = await gatewayWith({ EXTRACT_CACHE_MAX_BYTES: '0' });
  const gatewayAddress = `http://127.0.0.1:${(gateway.server.address() as { port: number }).port}`;

  // Warm the extractor cache and capture the exact JSON the full path returns.
  const sample = await fetch(`${gatewayAddress}/api/v1/extract`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
    body: bodies[0],
  });
  const sampleBody = (await sample.json()) as Record<string, unknown>;
  if (sample.status !== 200)
    throw new Error(`warm-up failed: ${sample.status} ${JSON.stringify(sampleBody)}`);

  const bare = Fastify();
  bare.post('/api/v1/extract', async () => sampleBody);
  await bare.listen({ host: '127.0.0.1', port: 0 });

  const ready: Ready = {
    gatewayPort: (gateway.server.address() as { port: number }).port,
    uncachedGatewayPort: (uncached.server.address() as { port: number }).port,
    barePort: (bare.server.address() as { port: number }).port,
    grpcPort,
    apiKey,
  };
  process.send?.(ready);
  reportRss();
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
  let next = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/api/v1/extract`,
    method: 'POST',
    connections: CONNECTIONS,
    duration,
    headers: { 'content-type': 'application/json', ...headers },
    body: bodies[0],
    // More than one video: each request asks for the next one, round robin.
    ...(VIDEOS > 1
      ? { requests: [{ setupRequest: (req) => ({ ...req, body: bodies[next++ % VIDEOS] }) }] }
      : {}),
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
  const request = {
    videoId: VIDEO_ID,
    language: 'en',
    include: [],
    forceRefresh: false,
    translate: false,
    segmentsAsJson: false,
    segmentsJsonAsBytes: false,
    headJsonAsBytes: false,
    answerJson: false,
    mode: 0 as const,
    maxAudioSeconds: 0,
    accountId: '',
  };
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
  const extra = SPLIT
    ? ['--grpc-port', String((await forkServer<{ port: number }>('extractor', 'serve-extractor')).port)]
    : [];
  const ready = await forkServer<Ready>('server', 'serve', extra);
  try {
    const auth = { 'x-api-key': ready.apiKey };
    // Warm-up of each (JIT, connection pools, the extractor's cache of every video), then the
    // measured runs.
    await load('warm-up bare', ready.barePort, {}, 2);
    await load('warm-up full', ready.gatewayPort, auth, 2);
    if (!ONLY_FULL) await load('warm-up micro-cache off', ready.uncachedGatewayPort, auth, 2);
    const bare = await load('bare fastify route', ready.barePort, {}, ONLY_FULL ? 1 : DURATION);
    // RSS is collected while the gateways are under load.
    const sampled = async (name: string, port: number) => {
      sampling = name;
      try {
        return await load(name, port, auth, DURATION);
      } finally {
        sampling = null;
      }
    };
    const full = await sampled('full path (auth, rate limit, micro-cache, format)', ready.gatewayPort);
    const others = ONLY_FULL
      ? []
      : [
          await sampled(
            'full path, micro-cache off (auth, rate limit, gRPC, format)',
            ready.uncachedGatewayPort,
          ),
          await grpcAlone(ready.grpcPort, DURATION),
        ];
    const ratio = full.rps / bare.rps;
    console.log(
      `\ncached POST /api/v1/extract, ${SEGMENTS} segments, ${VIDEOS} video(s), ${CONNECTIONS} connections, ` +
        `${DURATION} s each, extractor ${SPLIT ? 'in its own process (--split)' : 'in the gateway process'}\n`,
    );
    console.log('| run | requests/s | % of bare | p50 ms | p99 ms | non-2xx | errors |');
    console.log('|---|---:|---:|---:|---:|---:|---:|');
    for (const r of [bare, full, ...others]) {
      console.log(
        `| ${r.name} | ${r.rps.toFixed(0)} | ${((100 * r.rps) / bare.rps).toFixed(1)} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${r.errors} |`,
      );
    }
    const okRatio = ratio >= 0.4;
    const okP99 = full.p99 < 20;
    reportResult({
      bench: 'gateway-extract',
      what: `hand-assembled gateway, cached extract, ${SEGMENTS} segments, % of bare`,
      value: `${(ratio * 100).toFixed(1)}%, p99 ${full.p99} ms`,
      target: '>= 40%, p99 < 20 ms',
      met: okRatio && okP99,
    });
    console.log(
      `\nratio full / bare: ${(ratio * 100).toFixed(1)}% (target >= 40%: ${okRatio ? 'met' : 'NOT met'})`,
    );
    console.log(`full-path p99: ${full.p99} ms (target < 20 ms: ${okP99 ? 'met' : 'NOT met'})`);
    if (others.length) {
      const [uncachedRun, ceiling] = others as [Measured, Measured];
      console.log(
        `without the micro-cache every request pays the gRPC hop: ${((uncachedRun.rps / bare.rps) * 100).toFixed(1)}% ` +
          `of bare, bounded by the hop alone at ${((ceiling.rps / bare.rps) * 100).toFixed(1)}%`,
      );
    }
    const memoryOk = reportMemory();
    if (full.non2xx > 0 || full.errors > 0) console.log('WARNING: the full path answered non-2xx or errors');
    process.exitCode = okRatio && okP99 && memoryOk && full.non2xx === 0 ? 0 : 1;
  } finally {
    for (const child of children) child.kill();
  }
}

/** Growth of RSS above this between the run's second and last quarter counts as unbounded. */
const MAX_GROWTH = 0.1;

/** RSS per run and process: the second and last quarter's medians and the growth between them. */
function reportMemory(): boolean {
  const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
  console.log(
    `\nRSS under load (sampled every ${RSS_SAMPLE_MS / 1000} s; ` +
      `${SPLIT ? 'gateway and extractor in separate processes' : 'gateway and extractor in one process'})\n`,
  );
  console.log('| run | process | samples | peak | median 2nd quarter | median last quarter | growth |');
  console.log('|---|---|---:|---:|---:|---:|---:|');
  let ok = true;
  for (const [run, processes] of rssSamples) {
    for (const [name, samples] of Object.entries(processes)) {
      const label = name === 'server' ? (SPLIT ? 'gateway' : 'gateway + extractor') : name;
      const q = Math.floor(samples.length / 4);
      if (q < 1) {
        console.log(`| ${run} | ${label} | ${samples.length} | | | | too few samples |`);
        continue;
      }
      const second = median(samples.slice(q, 2 * q));
      const last = median(samples.slice(samples.length - q));
      const growth = last / second - 1;
      ok &&= growth <= MAX_GROWTH;
      console.log(
        `| ${run} | ${label} | ${samples.length} | ${mb(Math.max(...samples))} | ${mb(second)} | ${mb(last)} | ${(100 * growth).toFixed(1)}% |`,
      );
    }
  }
  console.log(
    `RSS growth, second to last quarter of each run (limit ${100 * MAX_GROWTH}%): ${ok ? 'bounded' : 'NOT bounded'}` +
      (DURATION < 60 ? ` (a ${DURATION} s run; the memory check is BENCH_DURATION_S=60)` : ''),
  );
  return ok;
}

if (args[0] === 'serve') await serve();
else if (args[0] === 'serve-extractor') {
  process.send?.({ port: await startExtractor() });
  reportRss();
  process.on('disconnect', () => process.exit(0));
  process.on('SIGTERM', () => process.exit(0));
} else await main();
