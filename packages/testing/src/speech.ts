/**
 * Speech a test or a benchmark can score a speech-to-text engine on: texts read aloud by Debian's
 * espeak-ng in several voices and speeds, clips without speech made by sox (silence, a tone, noise,
 * plucked chords), and the word error rate of a transcript against the text that was read.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/** Texts written for scoring: plain sentences a captionless video might hold, no names to guess. */
export const SPEECH_TEXTS: readonly string[] = [
  'The library opens early on weekdays and closes late on Fridays. Visitors can borrow up to ten books ' +
    'at a time, and most of them bring the books back within two weeks. On rainy afternoons the reading ' +
    'room is full of students who come to study in a quiet place.',
  'To make a simple soup, cut two onions and three carrots into small pieces. Cook them slowly in a ' +
    'large pot with a little oil until they are soft. Then add water, salt and a handful of rice, and let ' +
    'everything boil gently for about twenty minutes.',
  'Our team will meet again next week to talk about the new project. Please read the short report before ' +
    'the meeting and write down any questions you have. We want to finish the first part of the work ' +
    'before the end of the month.',
  'The mountain road was narrow and steep, so the driver went slowly around every corner. Near the top ' +
    'the clouds opened and the whole valley appeared below us, green and bright in the morning light.',
];

/** espeak-ng voices and speeds (words per minute) the texts are read in. */
export const SPEECH_VOICES: readonly { voice: string; wpm: number; label: string }[] = [
  { voice: 'en-us', wpm: 160, label: 'US English, 160 wpm' },
  { voice: 'en-gb', wpm: 140, label: 'British English, 140 wpm' },
  { voice: 'en-us+f3', wpm: 185, label: 'US English female, 185 wpm' },
  { voice: 'en-gb-scotland', wpm: 150, label: 'Scottish English, 150 wpm' },
];

/** Whether espeak-ng and sox are installed (apt-get install espeak-ng sox). */
export function speechToolsPresent(): boolean {
  const ok = (cmd: string, args: string[]) => spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
  return ok('espeak-ng', ['--version']) && ok('sox', ['--version']);
}

/** Reads TEXT aloud into a 16-bit WAV at OUT (espeak-ng's own 22.05 kHz). */
export function speak(text: string, voice: string, wpm: number, out: string): string {
  const r = spawnSync('espeak-ng', ['-v', voice, '-s', String(wpm), '-w', out, text], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`espeak-ng failed: ${r.stderr || r.error}`);
  return out;
}

/** Clips without any speech, 10 s each, in DIR: name → path. */
export function nonSpeechClips(dir: string): Record<string, string> {
  const clips: Record<string, string[]> = {
    silence: ['trim', '0', '10'],
    tone: ['synth', '10', 'sine', '440', 'vol', '0.5'],
    'pink noise': ['synth', '10', 'pinknoise', 'vol', '0.3'],
    'plucked chords (music-like)': [
      'synth',
      '0.5',
      'pluck',
      'C4',
      'pluck',
      'E4',
      'pluck',
      'G4',
      ':',
      'synth',
      '0.5',
      'pluck',
      'A3',
      'pluck',
      'C4',
      'pluck',
      'E4',
      'repeat',
      '9',
      'vol',
      '0.4',
    ],
    'rising sweep': ['synth', '10', 'sine', '200-2000', 'vol', '0.4'],
  };
  const out: Record<string, string> = {};
  for (const [name, effects] of Object.entries(clips)) {
    const file = join(dir, `${name.replace(/\W+/g, '-')}.wav`);
    const r = spawnSync('sox', ['-n', '-r', '16000', '-c', '1', file, ...effects], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`sox failed for ${name}: ${r.stderr || r.error}`);
    out[name] = file;
  }
  return out;
}

const SMALL = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];

/** "20" → "twenty", "42" → "forty two"; longer digit runs are read digit by digit ("911"). */
function spellNumber(digits: string): string {
  const n = Number(digits);
  if (digits.length <= 2 && n < 20) return SMALL[n]!;
  if (digits.length === 2)
    return n % 10 === 0 ? TENS[n / 10]! : `${TENS[Math.floor(n / 10)]} ${SMALL[n % 10]}`;
  return [...digits].map((d) => SMALL[Number(d)]).join(' ');
}

/** Lower case, numbers spelled out, punctuation gone: the words to compare. */
export function normalisedWords(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/(\d),(?=\d{3}\b)/g, '$1')
    .replace(/\d+/g, (d) => ` ${spellNumber(d)} `)
    .replace(/[^a-z0-9' ]+/g, ' ')
    .split(/\s+/)
    .filter(Boolean);
}

/** (substitutions + deletions + insertions) / words of the reference, after normalisedWords. */
export function wordErrorRate(reference: string, hypothesis: string): number {
  const ref = normalisedWords(reference);
  const hyp = normalisedWords(hypothesis);
  if (ref.length === 0) return hyp.length === 0 ? 0 : 1;
  let previous = Array.from({ length: hyp.length + 1 }, (_, j) => j);
  for (let i = 1; i <= ref.length; i++) {
    const row = [i];
    for (let j = 1; j <= hyp.length; j++) {
      const cost = ref[i - 1] === hyp[j - 1] ? 0 : 1;
      row.push(Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost));
    }
    previous = row;
  }
  return previous[hyp.length]! / ref.length;
}
