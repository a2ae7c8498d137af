/**
 * Batch fan-out over the event bus: gateway fan-out → `extract.jobs` → 2 extractor workers (real
 * extraction services, YouTube client) → fake YouTube answering every request after 200 ms →
 * `extract.results` → the gateway that asked.
 *
 *   eval "$(bash scripts/engines.sh up kafka)"
 *   node_modules/.bin/node scripts/bench/batch-fanout.ts [--trials 5] [--clients 10] [--batches 10]
 *     [--partitions 32] [--latency 200] [--concurrency 8] [--members 4]
 *
 * 1. Ratio: a cold batch of 10 videos vs a cold single extract (one getTranscript on the same
 *    extraction service, no bus), median over `trials`. Target: <= 1.5 (the
 *    videos run in parallel, not one after another).
 * 2. Load: `clients` concurrent clients each sending `batches` batches of 10 cold videos; end-to-end
 *    latency of FanOut.run (publish → all results back), p50/p99.
 * 3. Playlist of 25: the listing (cold, one getPlaylist on an extraction service,
 *    as the gateway asks the extractor over gRPC) then its 25 cold videos through the bus, against
 *    the same cold single extract, median over `trials` with p50/p99; then `clients` concurrent
 *    clients each asking `playlists` playlists, p50/p99. Target: playlist <= 2x a single extract.
 * Caches are cold throughout (transcript TTL 1 ms). The HTTP layer (auth, validation, formatting) is
 * not part of this path; scripts/bench/gateway-extract.ts measures it.
 * Each worker runs `--members` group members (default: the worker's, 4) with `--concurrency` jobs in
 * flight each (default: the worker's, EXTRACT_WORKER_CONCURRENCY's default), several of one
 * partition included; `--concurrency 1` is one job per member at a time. The jobs topic is created
 * with `--partitions` (default 64). Without KAFKA_BROKERS the in-process bus is used, and the
 * output says so.
 */
import { randomUUID } from 'node:crypto';
import {
  createInMemoryKeyValueStore,
  createInProcessEventBus,
  createJsonCache,
  createKafkaEventBus,
} from '@subx/ports';
import type { EventBus, Subscription } from '@subx/ports';
import { FAST_KAFKA_TIMINGS } from '@subx/testing/engines';
import { generatePlaylist, startFakeYouTube } from '@subx/testing/fake-youtube';
import { YouTubeClient, loadYouTubeConfig } from '@subx/youtube';
import { createExtractionService } from '../../services/extractor/src/extraction-service.ts';
import {
  DEFAULT_EXTRACT_WORKER_CONCURRENCY,
  startExtractWorker,
} from '../../services/extractor/src/jobs/extract-worker.ts';
import { createKafkaFanOut } from '@subx/fanout';
import type { FanOutRequest } from '@subx/fanout';
import { silentLogger, syntheticVideos } from '../../test/system/support.ts';
import { reportResult } from './lib/result.ts';

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const TRIALS = arg('trials', 5);
const CLIENTS = arg('clients', 10);
const BATCHES = arg('batches', 10);
const PARTITIONS = arg('partitions', 64);
const LATENCY = arg('latency', 200);
const PLAYLISTS = arg('playlists', 2);
const CONCURRENCY = arg('concurrency', DEFAULT_EXTRACT_WORKER_CONCURRENCY);
const MEMBERS = arg('members', 4);
const BATCH = 10;
const PLAYLIST_SIZE = 25;

const brokers = process.env.KAFKA_BROKERS?.split(',').filter(Boolean);
const suffix = randomUUID().slice(0, 8);
const topics = { jobs: `bench.extract.jobs.${suffix}`, results: `bench.extract.results.${suffix}` };

const inProcess = brokers ? null : createInProcessEventBus({ partitions: PARTITIONS });
const makeBus = (clientId: string): EventBus =>
  inProcess ??
  createKafkaEventBus({
    brokers: brokers!,
    clientId,
    partitions: PARTITIONS,
    consumer: { ...FAST_KAFKA_TIMINGS.consumer, maxWaitTimeInMs: 10 },
  });

const videos = syntheticVideos(200, 'bench');
// A playlist of 25: its listing and, for the ids the listing names (synthv00001...), the videos.
const PLAYLIST_ID = `PLbench${suffix}`;
const playlist = generatePlaylist({ playlistId: PLAYLIST_ID, videos: PLAYLIST_SIZE });
const playlistVideos = syntheticVideos(PLAYLIST_SIZE + 1, 'synthv');
const yt = await startFakeYouTube({
  routes: {
    videos: { ...videos.routes.videos, ...playlistVideos.routes.videos },
    playlists: { [PLAYLIST_ID]: { inline: playlist.first } },
  },
  latencyMs: LATENCY,
});
const youtubeConfig = loadYouTubeConfig({ YOUTUBE_BASE_URL: yt.url, YOUTUBE_RETRY_BASE_MS: '1' });
const clients: YouTubeClient[] = [];
function coldExtraction() {
  const youtube = YouTubeClient.create(youtubeConfig);
  clients.push(youtube);
  return createExtractionService({
    youtube,
    cache: createJsonCache(createInMemoryKeyValueStore(), { prefix: 'extractor' }),
    ttl: { transcriptMs: 1, validateMs: 1, playlistMs: 1 },
  });
}

const buses: EventBus[] = [];
const workers: Subscription[] = [];
for (let i = 0; i < 2; i++) {
  const bus = makeBus(`bench-worker-${i}`);
  buses.push(bus);
  workers.push(
    await startExtractWorker({
      bus,
      extraction: coldExtraction(),
      logger: silentLogger,
      groupId: `bench-workers-${suffix}`,
      topic: topics.jobs,
      resultsTopic: topics.results,
      members: MEMBERS,
      concurrency: CONCURRENCY,
    }),
  );
}
const gatewayBus = makeBus('bench-gateway');
buses.push(gatewayBus);
const fanOut = createKafkaFanOut({
  bus: gatewayBus,
  instanceId: `bench-${suffix}`,
  clock: { now: () => Date.now() },
  logger: silentLogger,
  jobsTopic: topics.jobs,
  resultsTopic: topics.results,
  workersGroupId: `bench-workers-${suffix}`,
});
await fanOut.start();

let cursor = 0;
const nextIds = (n: number) => Array.from({ length: n }, () => videos.ids[cursor++ % videos.ids.length]!);
const batchRequest = (ids: string[]): FanOutRequest => ({
  requestId: randomUUID(),
  jobs: ids.map((videoId) => ({ videoId, language: 'en', include: [], translate: false })),
  totalTimeoutMs: 60_000,
  itemTimeoutMs: 60_000,
});
async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const median = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );

// Warm-up: connections, metadata, the first fetch of each client (not measured).
await fanOut.run(batchRequest(nextIds(BATCH)));
const direct = coldExtraction();
await direct.getTranscript({
  videoId: nextIds(1)[0]!,
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
});

/** One cold single extract of the next video, on the extraction service directly (no bus). */
const coldSingle = async () => {
  const [videoId] = nextIds(1);
  const request = {
    videoId: videoId!,
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
  return (await timed(() => direct.getTranscript(request))).ms;
};

const singles: number[] = [];
const batches: number[] = [];
let failures = 0;
for (let t = 0; t < TRIALS; t++) {
  singles.push(await coldSingle());
  const { ms, value } = await timed(() => fanOut.run(batchRequest(nextIds(BATCH))));
  failures += value.filter((o) => !o.ok).length;
  batches.push(ms);
}
const ratio = median(batches) / median(singles);

const latencies: number[] = [];
const loadStart = performance.now();
await Promise.all(
  Array.from({ length: CLIENTS }, async () => {
    for (let b = 0; b < BATCHES; b++) {
      const { ms, value } = await timed(() => fanOut.run(batchRequest(nextIds(BATCH))));
      failures += value.filter((o) => !o.ok).length;
      latencies.push(ms);
    }
  }),
);
const loadSeconds = (performance.now() - loadStart) / 1000;
latencies.sort((a, b) => a - b);

const listingMs: number[] = [];
/** One cold playlist of 25: the listing, then its videos through the bus (the gateway's path). */
async function playlistRun(): Promise<number> {
  const t0 = performance.now();
  const listing = await direct.getPlaylist({ playlistId: PLAYLIST_ID, maxVideos: PLAYLIST_SIZE });
  listingMs.push(performance.now() - t0);
  if (listing.videoIds.length !== PLAYLIST_SIZE) {
    throw new Error(`the listing named ${listing.videoIds.length} videos, not ${PLAYLIST_SIZE}`);
  }
  const outcomes = await fanOut.run(batchRequest(listing.videoIds));
  const failed = outcomes.filter((o) => !o.ok).length;
  failures += failed;
  return failed;
}
const playlistTrials: number[] = [];
const playlistSingles: number[] = [];
for (let t = 0; t < TRIALS; t++) {
  playlistSingles.push(await coldSingle());
  playlistTrials.push((await timed(playlistRun)).ms);
}
const playlistRatio = median(playlistTrials) / median(playlistSingles);
// The breakdown of the trials: the listing's part, the rest is the 25 videos through the bus.
const trialListing = median(listingMs);
const playlistLoad: number[] = [];
await Promise.all(
  Array.from({ length: CLIENTS }, async () => {
    for (let p = 0; p < PLAYLISTS; p++) playlistLoad.push((await timed(playlistRun)).ms);
  }),
);
playlistLoad.sort((a, b) => a - b);
const sortedTrials = [...playlistTrials].sort((a, b) => a - b);

const fmt = (ms: number) => `${ms.toFixed(0)} ms`;
console.log(
  `bus: ${brokers ? `Kafka ${brokers.join(',')}` : 'IN-PROCESS (KAFKA_BROKERS unset)'}; jobs topic partitions: ${PARTITIONS}; 2 workers x ${MEMBERS} members, ${CONCURRENCY} jobs in flight each; fake YouTube latency ${LATENCY} ms per request`,
);
console.log(
  `single extract (cold, direct):   median ${fmt(median(singles))}  [${singles.map(fmt).join(', ')}]`,
);
console.log(
  `batch of ${BATCH} (cold, via bus):    median ${fmt(median(batches))}  [${batches.map(fmt).join(', ')}]`,
);
console.log(`ratio batch/single: ${ratio.toFixed(2)} (target <= 1.5: ${ratio <= 1.5 ? 'met' : 'NOT met'})`);
reportResult({
  bench: 'batch-fanout',
  what: `cold batch of ${BATCH} via the bus / one cold extract`,
  value: `${ratio.toFixed(2)}×`,
  target: '<= 1.5×',
  met: ratio <= 1.5,
});
console.log(
  `load: ${CLIENTS} clients x ${BATCHES} batches of ${BATCH}: p50 ${fmt(percentile(latencies, 50))}, p99 ${fmt(percentile(latencies, 99))}, max ${fmt(latencies.at(-1)!)}; ${(latencies.length / loadSeconds).toFixed(1)} batches/s`,
);
console.log(
  `playlist of ${PLAYLIST_SIZE} (cold listing + videos via bus): median ${fmt(median(playlistTrials))}, p50 ${fmt(percentile(sortedTrials, 50))}, p99 ${fmt(percentile(sortedTrials, 99))}  [${playlistTrials.map(fmt).join(', ')}]; single extract in the same trials: median ${fmt(median(playlistSingles))}`,
);
console.log(
  `  of which the listing: median ${fmt(trialListing)}; the 25 videos via bus: ${fmt(median(playlistTrials) - trialListing)} ` +
    `(${((median(playlistTrials) - trialListing) / median(playlistSingles)).toFixed(2)}x a single extract)`,
);
reportResult({
  bench: 'batch-fanout',
  what: `cold playlist of ${PLAYLIST_SIZE} / one cold extract`,
  value: `${playlistRatio.toFixed(2)}×`,
  target: '<= 2×',
  met: playlistRatio <= 2,
});
console.log(
  `ratio playlist/single: ${playlistRatio.toFixed(2)} (target <= 2: ${playlistRatio <= 2 ? 'met' : 'NOT met'})`,
);
console.log(
  `playlist load: ${CLIENTS} clients x ${PLAYLISTS} playlists of ${PLAYLIST_SIZE}: p50 ${fmt(percentile(playlistLoad, 50))}, p99 ${fmt(percentile(playlistLoad, 99))}, max ${fmt(playlistLoad.at(-1)!)}`,
);
console.log(`failed items: ${failures}; gateway stats: ${JSON.stringify(fanOut.stats())}`);

await fanOut.stop();
await Promise.all(workers.map((w) => w.stop()));
await Promise.all(buses.map((b) => b.close()));
await Promise.all(clients.map((c) => c.close()));
await yt.close();
process.exitCode = ratio <= 1.5 && playlistRatio <= 2 && failures === 0 ? 0 : 1;
