/**
 * The adaptive caption ladder against a client retired mid-run, against the fake platform in
 * today's mode with a fixed latency per answer (run: node_modules/.bin/node scripts/bench/ladder-adaptation.ts
 * [--latency 100] [--before 10] [--after 25]).
 *
 * One long-lived client (as in the extractor) makes `before` cold extracts with every client answering,
 * then VISIONOS is retired (every VISIONOS /player answers 400 FAILED_PRECONDITION, as on 2026-09-11) and
 * it makes `after` more. Reported per phase: wasted upstream requests (refused /player calls), the median
 * latency and its ratio to one bare round trip to the same fake, measured in the same run. "During" is
 * the first 5 extracts after the retirement, "after" the last 10. Target: at most 5 VISIONOS requests
 * over the `after` extracts and the median of the last 10 under 2.6 × the latency.
 */
import { parseArgs } from 'node:util';
import { startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import { YouTubeClient, loadYouTubeConfig } from '@subx/youtube';
import { reportResult } from './lib/result.ts';

const { values } = parseArgs({
  options: {
    latency: { type: 'string', default: '100' },
    before: { type: 'string', default: '10' },
    after: { type: 'string', default: '25' },
  },
});
const latency = Number(values.latency);
const before = Number(values.before);
const after = Number(values.after);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2
    ? (s[(s.length - 1) / 2] as number)
    : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};
const cases = [
  { videoId: videoIds.manualAndAuto, language: 'en' },
  { videoId: videoIds.unlistedShort, language: 'en' },
  { videoId: videoIds.manyTracks, language: 'de' },
  { videoId: videoIds.autoOnlyFrench, language: 'fr' },
];

const fake = await startFakeYouTube({ mode: 'today', latencyMs: latency });
const yt = YouTubeClient.create(
  loadYouTubeConfig({ YOUTUBE_BASE_URL: fake.url, YOUTUBE_VERSION_REFRESH_MS: '0' }),
);
const refused = () => fake.requests.filter((r) => r.endpoint === 'player' && r.status === 400).length;

async function run(n: number): Promise<{ ms: number; wasted: number }[]> {
  const out: { ms: number; wasted: number }[] = [];
  for (let i = 0; i < n; i++) {
    const c = cases[i % cases.length] as (typeof cases)[number];
    const wasted0 = refused();
    const t0 = performance.now();
    await yt.getTranscript(c);
    out.push({ ms: performance.now() - t0, wasted: refused() - wasted0 });
  }
  return out;
}

try {
  const baseline: number[] = [];
  for (let i = 0; i < 7; i++) {
    const t0 = performance.now();
    await (await fetch(`${fake.url}/baseline-round-trip`)).text();
    baseline.push(performance.now() - t0);
  }
  const base = median(baseline);
  const warm = await run(before);
  fake.retireClient('VISIONOS');
  const retired = await run(after);
  const phases = [
    { phase: `before (${before}, all clients answer)`, runs: warm },
    { phase: 'during (first 5 after retirement)', runs: retired.slice(0, 5) },
    { phase: 'after (last 10)', runs: retired.slice(-10) },
  ];
  console.log(
    `fake platform today mode, ${latency} ms per answer; one bare round trip ${base.toFixed(0)} ms`,
  );
  console.log('phase                                 median ms  × round trip  wasted requests');
  for (const p of phases) {
    const m = median(p.runs.map((r) => r.ms));
    const wasted = p.runs.reduce((n, r) => n + r.wasted, 0);
    console.log(
      `${p.phase.padEnd(37)} ${m.toFixed(0).padStart(9)}  ${(m / base).toFixed(2).padStart(10)}×  ${String(wasted).padStart(15)}`,
    );
  }
  const visionos = fake.requests.filter((r) => r.endpoint === 'player' && r.status === 400).length;
  const last10 = median(retired.slice(-10).map((r) => r.ms));
  console.log(
    `VISIONOS asked ${visionos} times over the ${after} extracts after its retirement (fixed ladder: ${after})`,
  );
  reportResult({
    bench: 'ladder-adaptation',
    what: `VISIONOS retired: median of the last 10 cold extracts × ${latency} ms; VISIONOS requests over ${after}`,
    value: `${(last10 / latency).toFixed(2)}×; ${visionos}`,
    target: '< 2.6×; <= 5',
    met: last10 < 2.6 * latency && visionos <= 5,
  });
} finally {
  await yt.close();
  await fake.close();
}
