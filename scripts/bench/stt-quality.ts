/**
 * How well and how fast the speech engine (services/speech) transcribes: word error rate on speech
 * it never saw, real-time factor and CPU per audio minute, and whether audio without speech stays
 * without text.
 *
 *   node_modules/.bin/node scripts/bench/stt-quality.ts [--quick] [--threads 2]
 *     [--model-dir DIR] [--model-id ID]
 *
 * - The engine: services/speech/server.py from its venv (`bash scripts/engines.sh up stt` or
 *   services/speech/install.sh makes it), started here on a free port with STT_CPU_THREADS=--threads
 *   (2: the cores of the target machine), one worker; `--model-dir` loads another CTranslate2 model
 *   (the multilingual Whisper base of STT_MULTILINGUAL=1: ~/.cache/subx-engines/speech-venv/models/whisper-base).
 * - The speech: the texts of @subx/testing/speech (written for this, none of them in the model's
 *   training data), each read by espeak-ng in every voice and speed of SPEECH_VOICES (US and
 *   British English, a female variant, Scottish English; 140–185 words a minute), as WAV; each clip
 *   is sent once (`response_format=json`) after one warm-up request.
 * - Word error rate: (substitutions + deletions + insertions) / reference words over all clips of a
 *   voice and over everything, after lower-casing, dropping punctuation and spelling numbers out.
 * - Real-time factor: the engine's wall time per clip (request to answer, on loopback) over the
 *   clip's duration, summed over the clips; CPU per audio minute: the engine process's user + system
 *   time (/proc) over the minutes of audio. The baseline of both is the audio itself, so they are
 *   ratios of the same run; the machine's load average is printed beside them (a busy machine
 *   slows the engine, it does not change its words).
 * - No speech: silence, a 440 Hz tone, pink noise, plucked chords and a rising sweep (sox, 10 s
 *   each) must come back with no segment (what the extractor answers as NO_SPEECH), and the engine
 *   must not have given the model any of it (its `subx_speech_voiced_seconds_total` stays put).
 *
 * Targets: word error rate <= 10%; real-time factor <= 0.3 on 2 threads; 5 of 5 non-speech clips
 * without text. `--quick` (CI's run-all.sh --quick): two voices, two texts, looser bounds (WER <=
 * 15%, RTF <= 0.6: CI's machine runs other work at the same time).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  SPEECH_TEXTS,
  SPEECH_VOICES,
  nonSpeechClips,
  normalisedWords,
  speak,
  speechToolsPresent,
  wordErrorRate,
} from '@subx/testing/speech';
import { cpuMsOf } from './lib/process-stats.ts';
import { reportResult } from './lib/result.ts';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    threads: { type: 'string', default: '2' },
    'model-dir': { type: 'string' },
    'model-id': { type: 'string' },
  },
});
const QUICK = values.quick;
const ROOT = new URL('../../', import.meta.url).pathname;
const WER_TARGET = QUICK ? 0.15 : 0.1;
const RTF_TARGET = QUICK ? 0.6 : 0.3;
const BENCH = 'stt-quality';

function fail(message: string): never {
  console.error(`${BENCH}: ${message}`);
  process.exit(1);
}

if (!speechToolsPresent()) fail('espeak-ng and sox are needed (apt-get install espeak-ng sox)');
const install = spawnSync('bash', [join(ROOT, 'services/speech/install.sh')], { encoding: 'utf8' });
if (install.status !== 0) fail(`services/speech/install.sh failed: ${install.stderr.slice(-500)}`);
const python = install.stdout.trim();

async function startEngine(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(python, [join(ROOT, 'services/speech/server.py'), '0'], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/',
      STT_CPU_THREADS: values.threads,
      STT_CONCURRENCY: '1',
      ...(values['model-dir'] ? { STT_MODEL_DIR: values['model-dir'] } : {}),
      ...(values['model-id'] ? { STT_MODEL_ID: values['model-id'] } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The engine's own lines (the model it loaded, problems), not its one line per request.
  child.stderr!.on('data', (d: Buffer) => {
    for (const line of d.toString().split('\n'))
      if (line && !/^speech: [\d.:]+ "/.test(line)) process.stderr.write(`${line}\n`);
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('the engine did not start within 120 s')), 120_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`the engine exited with ${code}`)));
  });
  child.stdout!.resume();
  return { url, child };
}

async function transcribe(
  url: string,
  file: string,
): Promise<{ text: string; segments: unknown[]; ms: number }> {
  const form = new FormData();
  form.set('file', new Blob([readFileSync(file)], { type: 'audio/wav' }), 'clip.wav');
  form.set('model', 'whisper-1');
  form.set('response_format', 'verbose_json');
  const t0 = performance.now();
  const res = await fetch(`${url}/v1/audio/transcriptions`, { method: 'POST', body: form });
  const body = (await res.json()) as { text: string; segments: unknown[] };
  const ms = performance.now() - t0;
  if (res.status !== 200) fail(`the engine answered ${res.status}: ${JSON.stringify(body)}`);
  return { ...body, ms };
}

async function voicedSeconds(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^subx_speech_voiced_seconds_total (\S+)$/m.exec(text)?.[1] ?? NaN);
}

const seconds = (file: string) => Number(spawnSync('soxi', ['-D', file], { encoding: 'utf8' }).stdout.trim());
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

const dir = mkdtempSync(join(tmpdir(), 'stt-quality-'));
const engine = await startEngine();
try {
  const voices = QUICK ? SPEECH_VOICES.slice(0, 2) : SPEECH_VOICES;
  const texts = QUICK ? SPEECH_TEXTS.slice(0, 2) : SPEECH_TEXTS;
  const clips = voices.flatMap((v, i) =>
    texts.map((text, j) => ({
      voice: v,
      text,
      file: speak(text, v.voice, v.wpm, join(dir, `v${i}-t${j}.wav`)),
    })),
  );
  await transcribe(engine.url, clips[0]!.file); // warm-up: first-call allocations
  const loadBefore = load();
  const cpuBefore = cpuMsOf(engine.child.pid!);
  let audioS = 0;
  let wallMs = 0;
  const perVoice = new Map<string, { errors: number; words: number }>();
  for (const clip of clips) {
    const heard = await transcribe(engine.url, clip.file);
    const duration = seconds(clip.file);
    audioS += duration;
    wallMs += heard.ms;
    const words = normalisedWords(clip.text).length;
    const errors = Math.round(wordErrorRate(clip.text, heard.text) * words);
    const v = perVoice.get(clip.voice.label) ?? { errors: 0, words: 0 };
    perVoice.set(clip.voice.label, { errors: v.errors + errors, words: v.words + words });
    console.log(
      `  ${clip.voice.label.padEnd(28)} ${duration.toFixed(1).padStart(5)} s audio, ${(heard.ms / 1000).toFixed(2).padStart(5)} s` +
        ` (RTF ${(heard.ms / 1000 / duration).toFixed(3)}), WER ${pct(errors / words).padStart(6)}: ${heard.text.slice(0, 70)}...`,
    );
  }
  const cpuMs = cpuMsOf(engine.child.pid!) - cpuBefore;
  const loadAfter = load();
  let errors = 0;
  let words = 0;
  console.log('\nword error rate by voice:');
  for (const [label, v] of perVoice) {
    errors += v.errors;
    words += v.words;
    console.log(`  ${label.padEnd(28)} ${pct(v.errors / v.words)} (${v.errors} of ${v.words} words)`);
  }
  const wer = errors / words;
  const rtf = wallMs / 1000 / audioS;
  const cpuPerMinute = cpuMs / 1000 / (audioS / 60);
  // What the wall time would be with the CPU to itself: CPU seconds per audio second, spread over the threads.
  const cpuRtf = cpuMs / 1000 / audioS / Number(values.threads);
  console.log(
    `\n${clips.length} clips, ${audioS.toFixed(1)} s of speech: WER ${pct(wer)}, real-time factor ${rtf.toFixed(3)}` +
      ` (${values.threads} threads), CPU ${cpuPerMinute.toFixed(1)} s per audio minute (${cpuRtf.toFixed(3)} of real time` +
      ` per thread: the factor with the CPU to itself); load average (1, 5, 15 min)` +
      ` ${loadBefore} before, ${loadAfter} after on ${cpus().length} CPUs`,
  );

  const before = await voicedSeconds(engine.url);
  let silent = 0;
  const nonSpeech = nonSpeechClips(dir);
  for (const [name, file] of Object.entries(nonSpeech)) {
    const heard = await transcribe(engine.url, file);
    const ok = heard.segments.length === 0 && heard.text === '';
    if (ok) silent += 1;
    console.log(
      `  no speech: ${name.padEnd(28)} ${ok ? 'no text (NO_SPEECH)' : `TEXT: ${heard.text}`} in ${heard.ms.toFixed(0)} ms`,
    );
  }
  const voiced = (await voicedSeconds(engine.url)) - before;
  console.log(`  seconds of it given to the model: ${voiced.toFixed(2)}`);
  const total = Object.keys(nonSpeech).length;

  reportResult({
    bench: BENCH,
    what: 'word error rate, espeak-ng speech',
    value: pct(wer),
    target: `<= ${pct(WER_TARGET)}`,
    met: wer <= WER_TARGET,
  });
  reportResult({
    bench: BENCH,
    what: `real-time factor, ${values.threads} threads`,
    value: rtf.toFixed(3),
    target: `<= ${RTF_TARGET}`,
    met: rtf <= RTF_TARGET,
  });
  reportResult({
    bench: BENCH,
    what: 'non-speech clips without text',
    value: `${silent}/${total}`,
    target: `${total}/${total}`,
    met: silent === total && voiced === 0,
  });
  if (wer > WER_TARGET || rtf > RTF_TARGET || silent !== total || voiced !== 0) process.exitCode = 1;
} finally {
  engine.child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
