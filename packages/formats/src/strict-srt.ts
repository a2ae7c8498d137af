/**
 * A strict SubRip reader, used by tests to prove every srt document we emit is well formed.
 * Stricter than players: consecutive numbering from 1, `HH:MM:SS,mmm --> HH:MM:SS,mmm` with
 * minutes/seconds below 60, end after start, at least one non-empty text line per cue, text
 * never containing `-->`, exactly one blank line between cues, and a final newline.
 */
export interface SrtCue {
  index: number;
  startMs: number;
  endMs: number;
  text: string;
}

const TIMING = /^(\d{2,}):([0-5]\d):([0-5]\d),(\d{3}) --> (\d{2,}):([0-5]\d):([0-5]\d),(\d{3})$/;

function ms(h: string, m: string, s: string, milli: string): number {
  return ((Number(h) * 60 + Number(m)) * 60 + Number(s)) * 1000 + Number(milli);
}

export function parseSrtStrict(input: string): SrtCue[] {
  if (input === '') return [];
  if (input.includes('\r')) throw new Error('SRT: carriage returns are not allowed (LF line endings)');
  if (!input.endsWith('\n')) throw new Error('SRT: the document must end with a newline');
  if (input.endsWith('\n\n')) throw new Error('SRT: trailing blank line');
  const blocks = input.slice(0, -1).split('\n\n');
  return blocks.map((block, i) => {
    const lines = block.split('\n');
    const where = `SRT cue ${i + 1}`;
    if (lines.length < 3) throw new Error(`${where}: needs an index, a timing line and text`);
    if (lines[0] !== String(i + 1)) throw new Error(`${where}: index is '${lines[0]}', expected ${i + 1}`);
    const t = TIMING.exec(lines[1] ?? '');
    if (!t) throw new Error(`${where}: bad timing line '${lines[1]}'`);
    const [, h1, m1, s1, f1, h2, m2, s2, f2] = t as unknown as string[];
    const startMs = ms(h1!, m1!, s1!, f1!);
    const endMs = ms(h2!, m2!, s2!, f2!);
    if (endMs <= startMs) throw new Error(`${where}: end is not after start`);
    const text = lines.slice(2);
    for (const line of text) {
      if (line.trim() === '') throw new Error(`${where}: empty text line`);
      if (line.includes('-->')) throw new Error(`${where}: text contains '-->'`);
    }
    return { index: i + 1, startMs, endMs, text: text.join('\n') };
  });
}
