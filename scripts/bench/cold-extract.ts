/**
 * Cold transcript extraction against the fake platform in today's mode with a fixed latency per answer
 * (run: node_modules/.bin/node scripts/bench/cold-extract.ts [--latency 150] [--runs 7]).
 *
 * Baseline, measured in the same run: one bare round trip to the same fake (a GET answered after the
 * same latency). The physical limit of a transcript with base metadata is 2 sequential round trips
 * (one /player, then the caption body, with the metadata request in parallel), so the target is
 * < 2.6 × the latency and the ratio to the baseline should sit just above 2.0. Each cold extract uses a
 * new client (no caches, no warm sessions, no coalescing across runs).
 */
import { parseArgs } from 'node:util';
import { startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import { YouTubeClient, loadYouTubeConfig } from '@subx/youtube';
import { reportResult } from './lib/result.ts';

const { values } = parseArgs({
  options: {
    latency: { type: 'string', default: '150' },
    runs: { type: 'string', default: '7' },
    // The CI-safe run (`npm run bench -- --quick`) allows more: it only catches a large regression.
    'max-ratio': { type: 'string', default: '2.6' },
  },
});
const latency = Number(values.latency);
const maxRatio = Number(values['max-ratio']);
const runs = Number(values.runs);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};

const fake = await startFakeYouTube({ mode: 'today', latencyMs: latency });
const cases = [
  { what: 'manual en', videoId: videoIds.manualAndAuto, language: 'en' },
  { what: 'auto-generated only en', videoId: videoIds.unlistedShort, language: 'en' },
  { what: 'non-English manual de', videoId: videoIds.manyTracks, language: 'de' },
  { what: 'auto-generated only fr', videoId: videoIds.autoOnlyFrench, language: 'fr' },
];

try {
  const baseline: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await (await fetch(`${fake.url}/baseline-round-trip`)).text();
    baseline.push(performance.now() - t0);
  }
  const base = median(baseline);
  console.log(`fake platform today mode, ${latency} ms per answer; ${runs} runs each (median)`);
  console.log(`baseline: one round trip ${base.toFixed(0)} ms`);
  console.log(`case                        ms   × round trip  target < ${maxRatio} × latency  requests`);
  let allMet = true;
  let worst = 0;
  for (const c of cases) {
    const times: number[] = [];
    let requests = 0;
    for (let i = 0; i < runs; i++) {
      const yt = YouTubeClient.create(
        loadYouTubeConfig({ YOUTUBE_BASE_URL: fake.url, YOUTUBE_VERSION_REFRESH_MS: '0' }),
      );
      const t0 = performance.now();
      await yt.getTranscript({ videoId: c.videoId, language: c.language });
      times.push(performance.now() - t0);
      requests = yt.upstreamCalls;
      await yt.close();
    }
    const m = median(times);
    const met = m < maxRatio * latency;
    worst = Math.max(worst, m / latency);
    allMet &&= met;
    console.log(
      `${c.what.padEnd(26)} ${m.toFixed(0).padStart(4)}   ${(m / base).toFixed(2).padStart(5)}×      ` +
        `${met ? 'met' : 'NOT MET'} (${(maxRatio * latency).toFixed(0)} ms)        ${requests}`,
    );
  }
  reportResult({
    bench: 'cold-extract',
    what: `cold extract, slowest of ${cases.length} cases, × ${latency} ms per answer`,
    value: `${worst.toFixed(2)}×`,
    target: `< ${maxRatio}×`,
    met: allMet,
  });
  console.log(
    allMet
      ? `all cold extracts within ${maxRatio} × latency`
      : `some cold extracts NOT within ${maxRatio} × latency`,
  );
} finally {
  await fake.close();
}
