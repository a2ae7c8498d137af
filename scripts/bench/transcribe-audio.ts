/**
 * What the extractor spends to hand a captionless video's audio to a transcription model: CPU time
 * and peak memory per audio minute (the ranged download from the platform and the upload to the
 * endpoint; the model's own time excluded), and the download's throughput against the audio host's
 * bandwidth.
 *
 *   node_modules/.bin/node scripts/bench/transcribe-audio.ts [--minutes 60] [--runs 3]
 *     [--bandwidth 4000000] [--quick]
 *
 * - The system: the extractor service alone, as its image runs it (services/extractor `npm start`:
 *   src/main.ts with the OpenTelemetry preload, logs at error), with TRANSCRIBE_* pointing at a
 *   stand-in endpoint, called over gRPC (GetTranscript, mode TRANSCRIBE, `forceRefresh` so each
 *   call downloads and uploads again). A fresh process per audio length.
 * - The platform: the fake of the tests (today's mode) in this process, serving the captionless
 *   speech video: the 70 s espeak-ng recording (packages/testing/audio), and the same recording
 *   looped to `--minutes` by ffmpeg without re-encoding (`-stream_loop`, `-c copy`). Its audio host
 *   sends every answer at `--bandwidth` bytes a second (`audioBytesPerSecond`).
 * - The model: a stand-in `POST /v1/audio/transcriptions` in this process that reads the upload
 *   without keeping it, counts its bytes, and answers one fixed verbose_json at once.
 * - Measured per length: CPU (user + system, /proc/PID/stat) per transcription, per audio minute,
 *   median of `--runs` warm runs; peak RSS growth per transcription (VmHWM after it, the peak reset
 *   by `clear_refs` just before it, minus VmRSS then), median of the runs; throughput: the audio's
 *   bytes over the time from the first range's request to the last range's last byte.
 * - Audio over the endpoint's 25 MB (3 x 60 min) goes up as parts cut by ffmpeg, a child process
 *   whose memory is its own.
 *
 * Targets: throughput >= 80% of the bandwidth on the long audio; CPU <= 50 ms per audio minute on
 * the long audio; peak RSS growth per extra byte of audio between the long audio and one three
 * times as long <= 0.5. The audio is spooled to a file as it arrives and uploaded from it, so the
 * process holds one network chunk at a time; its peak is the garbage collector's slack (tens of
 * MiB of chunks not yet collected), which does not grow with the audio, while holding the audio
 * costs at least one byte per byte. `--quick` (in CI's `run-all.sh --quick`): 10 minutes, 2 runs,
 * throughput and CPU only (no memory figure: with 2 MiB of audio the slack is all there is).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { extractorV1 } from '@subx/contracts';
import { SPEECH_VIDEO_ID, startFakeYouTube, videoIds } from '@subx/testing/fake-youtube';
import { startExtractorProcess } from './lib/extractor-process.ts';
import { cpuMsOf, statusBytesOf, upperMedian as median } from './lib/process-stats.ts';
import { reportResult } from './lib/result.ts';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string' },
    runs: { type: 'string' },
    bandwidth: { type: 'string', default: '4000000' },
    quick: { type: 'boolean', default: false },
  },
});
const MINUTES = Number(values.minutes ?? (values.quick ? 10 : 60));
const RUNS = Number(values.runs ?? (values.quick ? 2 : 3));
const BANDWIDTH = Number(values.bandwidth);
const MiB = 2 ** 20;
const AUDIO_DIR = new URL('../../packages/testing/audio/', import.meta.url).pathname;

function ffmpeg(args: string[]): string {
  const r = spawnSync('ffmpeg', ['-v', 'error', '-y', ...args], { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`ffmpeg ${args.join(' ')}: ${r.stderr || r.error?.message}`);
  return r.stdout;
}

function durationMsOf(file: string): number {
  const r = spawnSync(
    'ffprobe',
    ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', file],
    {
      encoding: 'utf8',
      timeout: 30_000,
    },
  );
  const seconds = Number(r.stdout.trim());
  if (!(seconds > 0)) throw new Error(`ffprobe could not read the length of ${file}: ${r.stderr}`);
  return seconds * 1000;
}

/** The 70 s recording looped to about `minutes`, both formats, without re-encoding. */
function longAudio(dir: string, minutes: number, name = 'speech-long') {
  const loops = Math.max(1, Math.round((minutes * 60) / 70.25) - 1);
  const webm = join(dir, `${name}.webm`);
  const m4a = join(dir, `${name}.m4a`);
  ffmpeg(['-stream_loop', String(loops), '-i', join(AUDIO_DIR, 'speech.webm'), '-c', 'copy', webm]);
  ffmpeg(['-stream_loop', String(loops), '-i', join(AUDIO_DIR, 'speech.m4a'), '-c', 'copy', m4a]);
  return { webm, m4a, durationMs: durationMsOf(webm) };
}

/** The stand-in model: counts each upload's bytes, keeps none of them, answers at once. */
async function standInModel(): Promise<{ server: Server; url: string; uploads: number[] }> {
  const uploads: number[] = [];
  // No `duration`: the stand-in does not decode, so it cannot say how long the audio was (the
  // extractor then counts the platform's length, and has no answer to hold as cut short).
  const answer = JSON.stringify({
    task: 'transcribe',
    language: 'english',
    text: 'one two three',
    segments: [{ id: 0, start: 0, end: 2.5, text: ' one two three' }],
  });
  const server = createServer((req, res) => {
    let bytes = 0;
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      if (req.method === 'POST' && req.url?.endsWith('/audio/transcriptions')) {
        uploads.push(bytes);
        res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
      } else res.writeHead(404).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, uploads };
}

interface Case {
  name: string;
  audio?: { webm: string; m4a: string; durationMs: number };
  minutes: number;
  /** What the extractor downloads: the lowest-bitrate audio-only format, the Opus one. */
  bytes: number;
}

interface Measured {
  cpuMsPerMinute: number;
  peakGrowth: number;
  restRss: number;
  throughput: number;
}

async function measureCase(c: Case, model: Awaited<ReturnType<typeof standInModel>>): Promise<Measured> {
  const served: { bytes: number; startMs: number; endMs: number }[] = [];
  const fake = await startFakeYouTube({
    mode: 'today',
    ...(c.audio ? { speechAudio: c.audio } : {}),
    audioBytesPerSecond: BANDWIDTH,
    onAudioServed: (s) => void served.push(s),
  });
  const extractor = await startExtractorProcess(
    {
      YOUTUBE_BASE_URL: fake.url,
      LOG_LEVEL: 'error',
      TRANSCRIBE_BASE_URL: model.url,
      TRANSCRIBE_MAX_SECONDS: '86400',
    },
    { forceRefresh: true, language: 'en', videoId: videoIds.manualAndAuto },
  ).catch(async (err: unknown) => {
    await fake.close();
    throw err;
  });
  // The deadline leaves the extractor more than one model request (TRANSCRIBE_TIMEOUT_MS, 120 s):
  // with less it starts no transcription at all.
  const call = (req: Partial<extractorV1.GetTranscriptRequest>) =>
    extractor.getTranscript({ forceRefresh: true, language: 'en', ...req }, 600_000);
  const transcribe = () =>
    call({ videoId: SPEECH_VIDEO_ID, mode: extractorV1.TranscriptMode.TRANSCRIPT_MODE_TRANSCRIBE });
  try {
    // Warm-up of the gRPC and platform paths (captions), not of the transcription path.
    for (let i = 0; i < 20; i++) await call({ videoId: videoIds.manualAndAuto });
    await new Promise((r) => setTimeout(r, 500));
    const pid = extractor.pid;
    const restRss = statusBytesOf(pid, 'VmRSS');
    const uploadsBefore = model.uploads.length;
    const cpu: number[] = [];
    const throughput: number[] = [];
    const peakGrowth: number[] = [];
    for (let i = 0; i < RUNS + 1; i++) {
      served.length = 0;
      // The peak resident set (VmHWM) restarts from the current one (Linux clear_refs, value 5).
      spawnSync('sh', ['-c', `echo 5 > /proc/${pid}/clear_refs`]);
      const rss0 = statusBytesOf(pid, 'VmRSS');
      const cpu0 = cpuMsOf(pid);
      const answer = await transcribe();
      const cpuMs = cpuMsOf(pid) - cpu0;
      peakGrowth.push(statusBytesOf(pid, 'VmHWM') - rss0);
      if (answer.segments.length === 0) throw new Error('the transcription answered no segments');
      const bytes = served.reduce((n, s) => n + s.bytes, 0);
      if (bytes !== c.bytes) throw new Error(`downloaded ${bytes} bytes, the audio has ${c.bytes}`);
      // The first transcription of the process pays for loading the path's code: not counted.
      if (i === 0) continue;
      cpu.push(cpuMs);
      const span = Math.max(...served.map((s) => s.endMs)) - Math.min(...served.map((s) => s.startMs));
      throughput.push(bytes / (span / 1000));
    }
    // The whole audio went to the model once per transcription: as the platform served it, or,
    // over the endpoint's 25 MB, as parts re-wrapped without re-encoding (each part's multipart
    // upload a little larger than its share of the frames).
    const uploads = model.uploads.slice(uploadsBefore);
    const uploaded = uploads.reduce((n, b) => n + b, 0);
    const perTranscription = Math.ceil(c.bytes / 25_000_000);
    if (uploads.length !== (RUNS + 1) * perTranscription || uploaded < (RUNS + 1) * c.bytes * 0.99)
      throw new Error(`uploads of ${uploads.join(', ')} bytes for audio of ${c.bytes} bytes`);
    return {
      cpuMsPerMinute: median(cpu) / c.minutes,
      peakGrowth: median(peakGrowth),
      restRss,
      throughput: median(throughput),
    };
  } finally {
    await extractor.stop();
    await fake.close();
  }
}

if (spawnSync('ffmpeg', ['-version']).status !== 0 || spawnSync('ffprobe', ['-version']).status !== 0) {
  // like compose-extract without Docker: said, not silently passed
  console.log(
    'transcribe-audio: not run (ffmpeg and ffprobe are needed to make the long audio: apt-get install ffmpeg)',
  );
  process.exit(0);
}
const dir = mkdtempSync(join(tmpdir(), 'subx-bench-audio-'));
const model = await standInModel();
try {
  const long = longAudio(dir, MINUTES);
  const cases: Case[] = [
    { name: 'short', minutes: 70.253 / 60, bytes: statSync(join(AUDIO_DIR, 'speech.webm')).size },
    { name: 'long', audio: long, minutes: long.durationMs / 60_000, bytes: statSync(long.webm).size },
  ];
  if (!values.quick) {
    const longer = longAudio(dir, 3 * MINUTES, 'speech-longer');
    cases.push({
      name: 'longer',
      audio: longer,
      minutes: longer.durationMs / 60_000,
      bytes: statSync(longer.webm).size,
    });
  }
  const results = new Map<string, Measured>();
  for (const c of cases) results.set(c.name, await measureCase(c, model));
  const mb = (b: number) => `${(b / MiB).toFixed(1)} MiB`;
  console.log(
    `extractor (src/main.ts) transcribing the fake's captionless video through a stand-in model; ` +
      `audio host at ${(BANDWIDTH / 1e6).toFixed(1)} MB/s; ${RUNS} warm runs per length\n`,
  );
  console.log(
    '| audio | bytes (Opus) | CPU ms per audio minute | peak RSS growth | RSS at rest | download throughput |',
  );
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const c of cases) {
    const r = results.get(c.name)!;
    console.log(
      `| ${c.minutes.toFixed(1)} min | ${mb(c.bytes)} | ${r.cpuMsPerMinute.toFixed(1)} | ${mb(r.peakGrowth)} | ${mb(r.restRss)} | ` +
        `${(r.throughput / 1e6).toFixed(2)} MB/s (${((100 * r.throughput) / BANDWIDTH).toFixed(0)}%) |`,
    );
  }
  const short = results.get('short')!;
  const longR = results.get('long')!;
  const longCase = cases[1]!;
  const share = longR.throughput / BANDWIDTH;
  reportResult({
    bench: 'transcribe-audio',
    what: `audio download throughput, ${longCase.minutes.toFixed(0)} min of audio, % of the host's ${(BANDWIDTH / 1e6).toFixed(0)} MB/s`,
    value: `${(100 * share).toFixed(0)}%`,
    target: '>= 80%',
    met: share >= 0.8,
  });
  reportResult({
    bench: 'transcribe-audio',
    what: `extractor CPU per audio minute (download + upload), ${longCase.minutes.toFixed(0)} min of audio`,
    value: `${longR.cpuMsPerMinute.toFixed(1)} ms (${short.cpuMsPerMinute.toFixed(1)} ms on 1.2 min)`,
    target: '<= 50 ms',
    met: longR.cpuMsPerMinute <= 50,
  });
  const longerCase = cases[2];
  if (longerCase) {
    // What holding the audio would cost: at least one byte of memory per byte of audio (the old
    // way, gathering it for one upload, measured 4.8x). Streaming it leaves the peak where the
    // garbage collector's slack puts it, whatever the length: the extra audio adds ~nothing.
    const longerR = results.get('longer')!;
    const perExtraByte = (longerR.peakGrowth - longR.peakGrowth) / (longerCase.bytes - longCase.bytes);
    reportResult({
      bench: 'transcribe-audio',
      what: `peak RSS growth per extra byte of audio, ${longerCase.minutes.toFixed(0)} min (${mb(longerCase.bytes)}) against ${longCase.minutes.toFixed(0)} min (${mb(longCase.bytes)})`,
      value: `${perExtraByte.toFixed(2)} (${mb(longerR.peakGrowth)} vs ${mb(longR.peakGrowth)})`,
      target: '<= 0.5',
      met: perExtraByte <= 0.5,
    });
  }
} finally {
  await new Promise((r) => model.server.close(r));
  rmSync(dir, { recursive: true, force: true });
}
