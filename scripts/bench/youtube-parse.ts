/**
 * Benchmarks of the platform client's parsers (run: node_modules/.bin/node scripts/bench/youtube-parse.ts).
 * 1. A synthetic 3-hour auto-generated json3 body (~6,000 events): parseTimedText (with rolling-caption
 *    removal) against the baseline of a plain JSON.parse of the same body.
 * 2. A 2,000-comment run (100 synthetic pages of 20): parsing every page, and the whole getComments call over
 *    an in-memory transport (no sockets), against the baseline of JSON.parse of the same pages.
 * Time: median of the runs. Memory: heap growth during one run, measured after a forced GC with no GC
 * forced in between (a minor GC during the run can only make the number smaller), plus what stays retained.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { generateAsrJson3, generateComments } from '@subx/testing/fake-youtube';
import { YouTubeClient, loadYouTubeConfig, parseCommentsPage, parseTimedText } from '@subx/youtube';
import { reportResult } from './lib/result.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

interface Result {
  name: string;
  medianMs: number;
  heapMb: number;
  retainedMb: number;
}

async function measure(name: string, runs: number, op: () => unknown): Promise<Result> {
  for (let i = 0; i < 3; i++) await op(); // warm-up (JIT)
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await op();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  gc();
  const before = process.memoryUsage().heapUsed;
  const holder: unknown[] = [await op()];
  const after = process.memoryUsage().heapUsed;
  gc();
  // the result is still referenced here, so this is what one run keeps alive
  const retained = process.memoryUsage().heapUsed;
  holder.length = 0;
  return {
    name,
    medianMs: times[Math.floor(times.length / 2)] as number,
    heapMb: Math.max(0, after - before) / 2 ** 20,
    retainedMb: Math.max(0, retained - before) / 2 ** 20,
  };
}

const fmt = (n: number, d = 2) => n.toFixed(d);

function table(title: string, rows: Result[], baseline: Result): void {
  console.log(`\n${title}`);
  console.log('| operation | median ms | heap growth MB | retained MB | time vs baseline |');
  console.log('|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.name} | ${fmt(r.medianMs)} | ${fmt(r.heapMb, 1)} | ${fmt(r.retainedMb, 1)} | ${fmt(r.medianMs / baseline.medianMs, 1)}x |`,
    );
  }
}

// ---------------------------------------------------------------- 3-hour transcript
const body = generateAsrJson3({ durationSec: 3 * 3600, events: 6000 });
const events = (JSON.parse(body) as { events: unknown[] }).events.length;
const segCount = parseTimedText(body, { dedupeRolling: true }).length;
console.log(
  `3-hour auto-generated json3: ${events} events, ${(body.length / 2 ** 20).toFixed(2)} MB, ${segCount} segments`,
);
const jsonBase = await measure('baseline: JSON.parse(body)', 30, () => JSON.parse(body));
const parse = await measure('parseTimedText(body, dedupeRolling)', 30, () =>
  parseTimedText(body, { dedupeRolling: true }),
);
table('Transcript', [jsonBase, parse], jsonBase);
const transcriptOk = parse.medianMs < 50 && parse.heapMb < 50;
console.log(`target (< 50 ms, < 50 MB): ${transcriptOk ? 'met' : 'NOT met'}`);
reportResult({
  bench: 'youtube-parse',
  what: '3-hour auto-generated transcript parsed: time and heap',
  value: `${parse.medianMs.toFixed(1)} ms, ${parse.heapMb.toFixed(1)} MB`,
  target: '< 50 ms, < 50 MB',
  met: transcriptOk,
});

// ---------------------------------------------------------------- 2,000 comments
const videoId = 'benchCmnts1';
const synth = generateComments({ videoId, topLevel: 2000, perPage: 20 });
const pageBodies = new Map<string, string>();
for (const [token, page] of synth.pages)
  if (token.includes('-top-')) pageBodies.set(token, JSON.stringify(page));
const nextBody = JSON.stringify(synth.next);
console.log(
  `\n2,000 comments: ${pageBodies.size} pages, ${([...pageBodies.values()].reduce((n, b) => n + b.length, 0) / 2 ** 20).toFixed(2)} MB`,
);

const now = Date.UTC(2026, 5, 1);
const pagesBase = await measure('baseline: JSON.parse of 100 pages', 20, () =>
  [...pageBodies.values()].map((b) => JSON.parse(b)),
);
const pagesParse = await measure('JSON.parse + parseCommentsPage x100', 20, () =>
  [...pageBodies.values()].map((b) => parseCommentsPage(JSON.parse(b), now)),
);

const memoryFetch = async (input: string, init: RequestInit): Promise<Response> => {
  const req = JSON.parse(String(init.body)) as { videoId?: string; continuation?: string };
  const text = req.videoId ? nextBody : (pageBodies.get(req.continuation ?? '') ?? '{}');
  return new Response(text, { status: 200, headers: { 'content-type': 'application/json' } });
};
const client = YouTubeClient.create(loadYouTubeConfig({ YOUTUBE_BASE_URL: 'http://127.0.0.1:9' }), {
  fetch: memoryFetch,
  clock: { now: () => now },
});
const full = await measure('getComments(max 2000) over in-memory transport', 10, async () => {
  const r = await client.getComments({ videoId, max: 2000, sort: 'relevance' });
  if (r.comments.length !== 2000) throw new Error(`expected 2000 comments, got ${r.comments.length}`);
  return r;
});
table('Comments', [pagesBase, pagesParse, full], pagesBase);
