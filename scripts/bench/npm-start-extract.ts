/**
 * POST /api/v1/extract measured on what a user runs: the real `npm start` launcher
 * (scripts/start-embedded.ts, every service in one process, default settings, metrics on) against
 * a bare fastify route serving the same bytes, both in processes of their own, loaded in the same
 * run by autocannon from this process.
 *
 *   node_modules/.bin/node scripts/bench/npm-start-extract.ts [--duration 10] [--rounds 3]
 *     [--warmup 8] [--connections 50] [--segments 40,400] [--quick] [--profile DIR]
 *
 * Two `npm start` processes run side by side: one with the defaults (the gateway's micro-cache
 * answers repeated extracts: the cached path), one with `EXTRACT_CACHE_TTL_MS=0` (every request
 * crosses the gRPC hop and the extractor answers from its own cache: the uncached path, what a
 * second replica or a working set larger than the micro-cache sees). The platform is the fake of the
 * tests in today's mode, with caption bodies of 40 and 400 cues. The only setting changed from the
 * defaults is the pro tier's daily limit (ACCESS_PRICING_JSON), so that the load is not refused.
 *
 * Each path is first loaded for `--warmup` seconds: a cold `npm start` takes about 6 s of this load
 * before V8 has optimised the request path (its CPU per request until then up to twice its steady
 * state), so a warm-up of 2 s left most of that in the first round. Then each round
 * measures bare, cached and uncached once per answer size. The rounds stay long (10 s): each path
 * rests while the others are loaded, and ten rounds of 3 s read the uncached path at 49-53% of bare
 * where 10 s rounds read 35-38%, at about the same main-thread CPU per request; probably the
 * garbage collection that a rest lets finish, which a server under continuous load never gets.
 * The ratios are per round (machines here are noisy), the table gives the median of the rounds and
 * every round's value,
 * and the CPU time each server's main thread spent per request (from /proc, around every load):
 * a figure that moves far less with the machine than requests/s, for telling a change of a few
 * percent from the noise.
 * Targets: cached >= 60% of bare with p99 < 20 ms, uncached >= 35% of bare, at 50
 * connections and 40-segment answers. `--quick` (the CI-safe variant in .ci/run): one round of 3 s,
 * 40 segments only, and generous bounds that only a large regression breaks. `--profile DIR`: both
 * npm start processes write a V8 CPU profile into DIR when they stop (open it in Chrome DevTools,
 * or summarise it with scripts/bench/cpu-profile-summary.ts).
 */
import { fork } from 'node:child_process';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import { EMBEDDED_ENV, spawnLauncher, type Launcher } from '@subx/embedded/launcher';
import { PATHS, TABLE_HEADER, figures, measureRounds, pct, tableRow } from './extract-load.ts';
import type { Round } from './extract-load.ts';
import { reportResult } from './lib/result.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    duration: { type: 'string' },
    rounds: { type: 'string' },
    connections: { type: 'string', default: '50' },
    segments: { type: 'string' },
    quick: { type: 'boolean', default: false },
    profile: { type: 'string' },
    warmup: { type: 'string' },
  },
});
const QUICK = values.quick;
const DURATION = Number(values.duration ?? (QUICK ? 3 : (process.env.BENCH_DURATION_S ?? 10)));
const ROUNDS = Number(values.rounds ?? (QUICK ? 1 : 3));
/** Seconds of load on each path before the rounds: until the JIT has the request path (above). */
const WARMUP = Number(values.warmup ?? (QUICK ? 2 : 8));
const CONNECTIONS = Number(values.connections);
const SIZES = (values.segments ?? (QUICK ? '40' : '40,400')).split(',').map(Number);

/** The targets, and the bounds of the CI-safe run (a large regression only). */
const TARGETS = QUICK
  ? { cached: 0.1, cachedP99: 100, uncached: 0.02 }
  : { cached: 0.6, cachedP99: 20, uncached: 0.35 };

/** One recorded video per answer size; its caption bodies are replaced by `size` generated cues. */
const VIDEO_BY_SIZE = new Map<number, string>(
  SIZES.map((size, i) => [size, [videoIds.manualAndAuto, videoIds.audioTracks, videoIds.chapters][i]!]),
);

interface BareReady {
  ports: Record<number, number>;
}

/** The bare route: fastify parsing the same JSON body and answering the captured bytes. */
async function serveBare(): Promise<void> {
  const bodies = await new Promise<Record<number, string>>((resolve) =>
    process.once('message', (m) => resolve(m as Record<number, string>)),
  );
  const ports: Record<number, number> = {};
  for (const [size, body] of Object.entries(bodies)) {
    const app = Fastify();
    app.post('/api/v1/extract', async (_req, reply) => reply.type('application/json').send(body));
    await app.listen({ host: '127.0.0.1', port: 0 });
    ports[Number(size)] = (app.server.address() as { port: number }).port;
  }
  process.send?.({ ports } satisfies BareReady);
  process.on('disconnect', () => process.exit(0));
}

interface Started {
  base: string;
  apiKey: string;
  launcher: Launcher;
}

async function startNpmStart(platformUrl: string, extra: Record<string, string>): Promise<Started> {
  const launcher = spawnLauncher([], {
    ...EMBEDDED_ENV,
    METRICS_PORT: '0',
    YOUTUBE_BASE_URL: platformUrl,
    ACCESS_PRICING_JSON: JSON.stringify({ dailyLimit: { pro: 1_000_000_000 } }),
    ...(values.profile ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${values.profile}` } : {}),
    ...extra,
  });
  const banner = await launcher.waitFor(
    /subx is running at (http:\/\/\S+)[\s\S]*pro API key:\s+(sxk_v1_[A-Za-z0-9]{32})/,
    60_000,
  );
  return { base: banner[1]!, apiKey: banner[2]!, launcher };
}

async function extractOnce(started: Started, body: string): Promise<string> {
  const res = await fetch(`${started.base}/api/v1/extract`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': started.apiKey },
    body,
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`extract answered ${res.status}: ${text.slice(0, 300)}`);
  return text;
}

async function main(): Promise<void> {
  const fake = await startFakeYouTube({
    mode: 'today',
    captionCues: Object.fromEntries([...VIDEO_BY_SIZE].map(([size, id]) => [id, size])),
  });
  const started: Started[] = [];
  const bareChild = fork(new URL(import.meta.url).pathname, ['serve-bare'], {
    execArgv: process.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const [cached, uncached] = await Promise.all([
      startNpmStart(fake.url, {}),
      startNpmStart(fake.url, { EXTRACT_CACHE_TTL_MS: '0' }),
    ]);
    started.push(cached, uncached);
    const requestBody = (size: number) =>
      JSON.stringify({ url: `https://www.youtube.com/watch?v=${VIDEO_BY_SIZE.get(size)}` });
    // Cold extract on each (fills the extractor's cache), then the cached answer's bytes.
    const answers: Record<number, string> = {};
    for (const size of SIZES) {
      await extractOnce(uncached, requestBody(size));
      await extractOnce(cached, requestBody(size));
      answers[size] = await extractOnce(cached, requestBody(size));
      const segments = (JSON.parse(answers[size]) as { subtitles?: unknown[] }).subtitles?.length;
      if (segments !== size) throw new Error(`expected ${size} segments, the answer has ${segments}`);
    }
    bareChild.send(answers);
    const bare = await new Promise<BareReady>((resolve, reject) => {
      bareChild.once('message', (m) => resolve(m as BareReady));
      bareChild.once('exit', (code) => reject(new Error(`bare route process exited with ${code}`)));
    });

    const runs = new Map<number, Round[]>();
    for (const size of SIZES) {
      // The server's process, for its CPU time per request (when the child has a pid).
      const serverPid = (pid: number | undefined) => (pid === undefined ? {} : { pid });
      const npmStart = (s: Started) => ({
        url: `${s.base}/api/v1/extract`,
        headers: { 'x-api-key': s.apiKey },
        ...serverPid(s.launcher.child.pid),
      });
      const targets = {
        bare: {
          url: `http://127.0.0.1:${bare.ports[size]}/api/v1/extract`,
          headers: {},
          ...serverPid(bareChild.pid),
        },
        cached: npmStart(cached),
        uncached: npmStart(uncached),
      };
      runs.set(
        size,
        await measureRounds(targets, requestBody(size), {
          rounds: ROUNDS,
          duration: DURATION,
          warmup: WARMUP,
          connections: CONNECTIONS,
        }),
      );
    }

    console.log(
      `\nPOST /api/v1/extract on npm start (default settings), ${CONNECTIONS} connections, ` +
        `${WARMUP} s of warm-up, ${DURATION} s per run, ${ROUNDS} round(s); ratio to a bare fastify route serving the same bytes\n`,
    );
    console.log(TABLE_HEADER);
    let ok = true;
    for (const [size, rounds] of runs) {
      const bytes = Buffer.byteLength(answers[size]!);
      for (const path of PATHS) {
        const f = figures(rounds, path);
        let target = '';
        if (size === SIZES[0] && path === 'cached') {
          const met = f.ratio >= TARGETS.cached && f.p99 < TARGETS.cachedP99;
          ok &&= met;
          target = `>= ${pct(TARGETS.cached)}, p99 < ${TARGETS.cachedP99} ms: ${met ? 'met' : 'NOT met'}`;
          reportResult({
            bench: 'npm-start-extract',
            what: `npm start, cached extract, ${size} segments, % of bare${QUICK ? ' (quick)' : ''}`,
            value: `${pct(f.ratio)}, p99 ${f.p99} ms`,
            target: `>= ${pct(TARGETS.cached)}, p99 < ${TARGETS.cachedP99} ms`,
            met,
          });
        } else if (size === SIZES[0] && path === 'uncached') {
          const met = f.ratio >= TARGETS.uncached;
          ok &&= met;
          target = `>= ${pct(TARGETS.uncached)}: ${met ? 'met' : 'NOT met'}`;
          reportResult({
            bench: 'npm-start-extract',
            what: `npm start, micro-cache off (gRPC hop), ${size} segments, % of bare${QUICK ? ' (quick)' : ''}`,
            value: `${pct(f.ratio)}, p99 ${f.p99} ms`,
            target: `>= ${pct(TARGETS.uncached)}`,
            met,
          });
        }
        ok &&= f.failed === 0;
        console.log(tableRow(`${size} segments (${(bytes / 1024).toFixed(1)} KiB)`, path, f, target));
      }
    }
    console.log(`\nnpm-start-extract: ${ok ? 'every target met' : 'a target was NOT met'}`);
    process.exitCode = ok ? 0 : 1;
  } finally {
    bareChild.kill();
    await Promise.all(started.map((s) => s.launcher.stop()));
    await fake.close();
  }
}

if (positionals[0] === 'serve-bare') await serveBare();
else await main();
