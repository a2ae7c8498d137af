/**
 * Cost per cold extract: CPU milliseconds and memory per in-flight extraction, at 50 concurrent
 * requests against the fake platform in today's mode (150 ms per upstream answer), ours against
 * youtube-transcript-api 1.2.5 on the same fake in the same run.
 *
 *   node_modules/.bin/node scripts/bench/cold-extract-cpu.ts [--latency 150] [--total 300]
 *     [--concurrency 50]
 *
 * - Ours: `npm start` as a child process (every service in one process, default settings, logs at
 *   error), POST /api/v1/extract with `force_refresh: true`, so every request goes to the platform
 *   (2 sequential round trips, with the base metadata the library does not fetch). The CPU is the
 *   whole process's (user + system from /proc/PID/stat) over the load: the gateway's HTTP, auth
 *   and limits and the gRPC hop are counted as extraction too, so the figure is an upper bound of
 *   the extractor's own. Memory per in-flight extraction: the process's RSS during the load (the
 *   median of samples every 50 ms) minus its RSS at rest after the warm-up, divided by the
 *   concurrency.
 * - Theirs: the library (driver.py --cpu) fetching the same videos, `--concurrency` threads with a
 *   session each; the CPU is the Python process's over the fetches, after its imports.
 * The fake runs in this process, so neither side pays for it. Target (issue 27): at least 5x less
 * CPU per transcript than the library.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import { startNpmStart } from '../../test/system/npm-start-process.ts';
import { reportResult } from './result.ts';
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
/** Linux clock ticks per second (USER_HZ), the unit of utime and stime in /proc/PID/stat. */
const CLOCK_TICKS = 100;

const cases = [
  { videoId: videoIds.manualAndAuto, language: 'en' },
  { videoId: videoIds.unlistedShort, language: 'en' },
  { videoId: videoIds.manyTracks, language: 'de' },
  { videoId: videoIds.autoOnlyFrench, language: 'fr' },
  { videoId: videoIds.audioTracks, language: 'en' },
  { videoId: videoIds.commentsDisabled, language: 'en' },
];

/** CPU time (user + system) of a process, in milliseconds. */
function cpuMsOf(pid: number): number {
  // The command name (field 2) may hold spaces: the fields after its closing parenthesis.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

function rssBytesOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

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

const version = await ensureLibrary();
const fake = await startFakeYouTube({ mode: 'today', latencyMs: LATENCY });
const system = await startNpmStart({ YOUTUBE_BASE_URL: fake.url, LOG_LEVEL: 'error' });
const pid = system.child.pid!;
try {
  const extract = async (i: number) => {
    const c = cases[i % cases.length]!;
    const res = await fetch(`${system.base}/api/v1/extract`, {
      method: 'POST',
      headers: { 'x-api-key': system.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({
        url: `https://youtu.be/${c.videoId}`,
        language: c.language,
        force_refresh: true,
      }),
    });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`extract of ${c.videoId} answered ${res.status}: ${body}`);
  };
  const atConcurrency = async (total: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < total) await extract(next++);
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
  const ourCpuMs = cpuMsOf(pid) - cpu0;
  clearInterval(sampler);
  const perInFlight = (median(rssSamples) - restRss) / CONCURRENCY;

  const them = await theirs(fake.url);
  if (them.errors > 0)
    throw new Error(`youtube-transcript-api failed ${them.errors} times: ${them.first_error}`);
  const ours = ourCpuMs / TOTAL;
  const theirsPer = them.cpu_ms / them.fetches;
  const ratio = theirsPer / ours;
  console.log(
    `fake platform in today's mode, ${LATENCY} ms per answer; ${TOTAL} cold extracts, ${CONCURRENCY} at a time; ` +
      `youtube-transcript-api ${version}\n`,
  );
  console.log('| side | CPU ms per transcript | wall s | transcripts/s | memory per in-flight extraction |');
  console.log('|---|---:|---:|---:|---:|');
  console.log(
    `| ours (npm start, whole process) | ${ours.toFixed(2)} | ${(wallMs / 1000).toFixed(1)} | ${((1000 * TOTAL) / wallMs).toFixed(0)} | ` +
      `${(perInFlight / 1024).toFixed(0)} KiB (RSS ${(restRss / 2 ** 20).toFixed(0)} MB at rest, ${(median(rssSamples) / 2 ** 20).toFixed(0)} MB under load) |`,
  );
  console.log(
    `| youtube-transcript-api ${version} (threads) | ${theirsPer.toFixed(2)} | ${(them.wall_ms / 1000).toFixed(1)} | ` +
      `${((1000 * them.fetches) / them.wall_ms).toFixed(0)} | |`,
  );
  reportResult({
    bench: 'cold-extract-cpu',
    what: `CPU per cold transcript, youtube-transcript-api / ours (${CONCURRENCY} concurrent, ${LATENCY} ms per answer)`,
    value: `${ratio.toFixed(1)}× less (${ours.toFixed(2)} vs ${theirsPer.toFixed(2)} ms)`,
    target: '>= 5× less',
    met: ratio >= 5,
  });
} finally {
  await system.stop();
  await fake.close();
}
