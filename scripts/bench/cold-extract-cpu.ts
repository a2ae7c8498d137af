/**
 * Cost per cold extract: CPU milliseconds and memory per in-flight extraction, at 50 concurrent
 * requests against the fake platform in today's mode (150 ms per upstream answer), ours against
 * youtube-transcript-api 1.2.5 on the same fake in the same run.
 *
 *   node_modules/.bin/node scripts/bench/cold-extract-cpu.ts [--latency 150] [--total 300]
 *     [--concurrency 50]
 *
 * - Ours, the extractor: the extractor service alone, as its image runs it (services/extractor
 *   `npm start`: src/main.ts with the OpenTelemetry preload, logs at error), called over gRPC
 *   (GetTranscript with `forceRefresh`, so every call goes to the platform: 2 sequential round
 *   trips, with the base metadata the library does not fetch). The CPU is the process's user +
 *   system time from /proc/PID/stat over the load. Memory per in-flight extraction: the process's
 *   RSS during the load (the median of samples every 50 ms) minus its RSS at rest after the
 *   warm-up, divided by the concurrency.
 * - Ours, the whole system: `npm start` (every service in one process) with POST /api/v1/extract
 *   and `force_refresh: true`; the gateway's HTTP, auth and limits and the gRPC hop count too.
 * - Theirs: the library (driver.py --cpu) fetching the same videos, `--concurrency` threads with a
 *   session each; the CPU is the Python process's over the fetches, after its imports.
 * The fake runs in this process, so neither side pays for it. Target: at least 5x less
 * CPU per transcript than the library.
 */
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import { startNpmStart } from '../../test/system/npm-start-process.ts';
import { startExtractorProcess } from './lib/extractor-process.ts';
import { coldExtract } from './lib/npm-start-calls.ts';
import { cpuMsOf, statusBytesOf, upperMedian as median } from './lib/process-stats.ts';
import { reportResult } from './lib/result.ts';
import { driver, ensureLibrary, python } from './vs-youtube-transcript-api/library.ts';

const { values } = parseArgs({
  options: {
    latency: { type: 'string', default: '150' },
    total: { type: 'string', default: '300' },
    concurrency: { type: 'string', default: '50' },
  },
});
const LATENCY = Number(values.latency);
const TOTAL = Number(values.total);
const CONCURRENCY = Number(values.concurrency);

const cases = [
  { videoId: videoIds.manualAndAuto, language: 'en' },
  { videoId: videoIds.unlistedShort, language: 'en' },
  { videoId: videoIds.manyTracks, language: 'de' },
  { videoId: videoIds.autoOnlyFrench, language: 'fr' },
  { videoId: videoIds.audioTracks, language: 'en' },
  { videoId: videoIds.commentsDisabled, language: 'en' },
];

const rssBytesOf = (pid: number) => statusBytesOf(pid, 'VmRSS');

interface TheirRun {
  fetches: number;
  errors: number;
  first_error: string | null;
  cpu_ms: number;
  wall_ms: number;
}

function theirs(fakeUrl: string): Promise<TheirRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, [
      driver,
      '--cpu',
      fakeUrl,
      String(TOTAL),
      String(CONCURRENCY),
      ...cases.map((c) => `${c.videoId}:${c.language}`),
    ]);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      try {
        resolve(JSON.parse(out.trim().split('\n').at(-1) ?? '') as TheirRun);
      } catch {
        reject(new Error(`driver.py --cpu exited with ${code}: ${out.slice(-2000)}`));
      }
    });
  });
}

interface OurRun {
  cpuMs: number;
  wallMs: number;
  restRss: number;
  loadRss: number;
}

/**
 * Runs `total` calls of `one`, CONCURRENCY at a time, after a warm-up of 2 x CONCURRENCY calls, and
 * measures the CPU and RSS of process `pid` over them.
 */
async function measure(pid: number, one: (i: number) => Promise<void>): Promise<OurRun> {
  const atConcurrency = async (total: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < total) await one(next++);
      }),
    );
  };
  // Warm-up: JIT, connection pools, the client's version discovery.
  await atConcurrency(2 * CONCURRENCY);
  await new Promise((r) => setTimeout(r, 1_000));
  const restRss = rssBytesOf(pid);
  const rssSamples: number[] = [];
  const sampler = setInterval(() => rssSamples.push(rssBytesOf(pid)), 50);
  const cpu0 = cpuMsOf(pid);
  const wall0 = performance.now();
  await atConcurrency(TOTAL);
  const wallMs = performance.now() - wall0;
  const cpuMs = cpuMsOf(pid) - cpu0;
  clearInterval(sampler);
  return { cpuMs, wallMs, restRss, loadRss: median(rssSamples) };
}

/** The extractor service alone, as its image runs it, driven over gRPC. */
async function extractorAlone(fakeUrl: string): Promise<OurRun> {
  // forceRefresh: every call goes to the platform, past the extractor's cache.
  const request = (i: number) => {
    const c = cases[i % cases.length]!;
    return { videoId: c.videoId, language: c.language, forceRefresh: true };
  };
  const extractor = await startExtractorProcess(
    { YOUTUBE_BASE_URL: fakeUrl, LOG_LEVEL: 'error' },
    request(0),
  );
  try {
    return await measure(extractor.pid, async (i) => {
      await extractor.getTranscript(request(i), 30_000);
    });
  } finally {
    await extractor.stop();
  }
}

/** `npm start`, every service in one process, driven over HTTP. */
async function wholeSystem(fakeUrl: string): Promise<OurRun> {
  const system = await startNpmStart({ YOUTUBE_BASE_URL: fakeUrl, LOG_LEVEL: 'error' });
  try {
    return await measure(system.child.pid!, async (i) => {
      const c = cases[i % cases.length]!;
      await coldExtract(system, c.videoId, c.language);
    });
  } finally {
    await system.stop();
  }
}

const version = await ensureLibrary();
const fake = await startFakeYouTube({ mode: 'today', latencyMs: LATENCY });
try {
  const extractor = await extractorAlone(fake.url);
  const system = await wholeSystem(fake.url);
  const them = await theirs(fake.url);
  if (them.errors > 0)
    throw new Error(`youtube-transcript-api failed ${them.errors} times: ${them.first_error}`);
  const theirsPer = them.cpu_ms / them.fetches;
  const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
  console.log(
    `fake platform in today's mode, ${LATENCY} ms per answer; ${TOTAL} cold extracts, ${CONCURRENCY} at a time; ` +
      `youtube-transcript-api ${version}\n`,
  );
  console.log('| side | CPU ms per transcript | wall s | transcripts/s | memory per in-flight extraction |');
  console.log('|---|---:|---:|---:|---:|');
  for (const [name, run] of [
    ['ours: the extractor service (gRPC)', extractor],
    ['ours: npm start, whole process (HTTP)', system],
  ] as const) {
    console.log(
      `| ${name} | ${(run.cpuMs / TOTAL).toFixed(2)} | ${(run.wallMs / 1000).toFixed(1)} | ${((1000 * TOTAL) / run.wallMs).toFixed(0)} | ` +
        `${((run.loadRss - run.restRss) / CONCURRENCY / 1024).toFixed(0)} KiB (RSS ${mb(run.restRss)} at rest, ${mb(run.loadRss)} under load) |`,
    );
  }
  console.log(
    `| youtube-transcript-api ${version} (threads) | ${theirsPer.toFixed(2)} | ${(them.wall_ms / 1000).toFixed(1)} | ` +
      `${((1000 * them.fetches) / them.wall_ms).toFixed(0)} | |`,
  );
  const ours = extractor.cpuMs / TOTAL;
  const ratio = theirsPer / ours;
  reportResult({
    bench: 'cold-extract-cpu',
    what: `CPU per cold transcript, youtube-transcript-api / our extractor (${CONCURRENCY} concurrent, ${LATENCY} ms per answer)`,
    value: `${ratio.toFixed(1)}× less (${ours.toFixed(2)} vs ${theirsPer.toFixed(2)} ms)`,
    target: '>= 5× less',
    met: ratio >= 5,
  });
} finally {
  await fake.close();
}
