import { decodeEntities, stripMarkup } from '@subx/formats';
import type { Segment, Word } from '../types.ts';

/**
 * Timedtext bodies in the three formats YouTube serves: json3 ({events}), srv3 (<timedtext format="3"><body><p>)
 * and srv1 (<transcript><text>). The format is sniffed from the body, not trusted from the URL, because a
 * server may ignore `fmt`. Output text is plain: entities decoded, markup stripped, whitespace collapsed.
 */

export type TimedTextFormat = 'json3' | 'srv3' | 'srv1';

export class TimedTextParseError extends Error {}

export { decodeEntities };

const NEEDS_WORK = /[<&\n\r\t\u00a0\u200b]| {2}/;

/**
 * Markup → plain text. Only real caption markup is stripped (`stripMarkup` of @subx/formats: `<i>`,
 * `<font ...>`, `<c.colorE5E5E5>`, `<br>`, srv3's `<s>` ...), never "anything between < and >": text
 * the platform sent escaped (`a &lt; b`, `&lt;3`, `x &lt;y and y&gt; z`) is content and survives.
 * srv1 escapes its markup once more (`&lt;i&gt;`, `&amp;#39;`): after the first decode those tags are
 * real and are stripped, and one more decode turns `&#39;` into `'`. Content `<` never comes back
 * from a decode as markup because only named caption tags are stripped.
 */
export function cleanText(raw: string): string {
  // fast path: most auto-generated cues are plain words
  if (!NEEDS_WORK.test(raw)) return raw.trim();
  let s = decodeEntities(stripMarkup(raw));
  if (s.includes('<')) s = stripMarkup(s);
  // Double-escaped references (`&amp;#39;` → `&#39;`, srv1 and some manual tracks) are decoded once
  // more, after the last strip: whatever this produces is content, never stripped.
  if (s.includes('&')) s = decodeEntities(s);
  return s
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((l) => l.replace(/[\s\u200b]+/g, ' ').trim())
    .filter((l) => l.length > 0)
    .join('\n');
}

export function detectFormat(body: string): TimedTextFormat {
  const head = body.trimStart().slice(0, 512);
  if (head.startsWith('{')) return 'json3';
  if (head.startsWith('<')) {
    if (/<timedtext[^>]*format="3"/.test(head) || /<body>|<p\s/.test(body.slice(0, 4096))) return 'srv3';
    if (/<transcript[\s>]/.test(head)) return 'srv1';
  }
  throw new TimedTextParseError('unrecognised timedtext body');
}

interface RawCue {
  start: number;
  duration: number;
  text: string;
  /** json3 only: the event's segs, each with its offset from the event's start. */
  segs?: { text: string; offsetMs: number | undefined }[];
}

interface Json3Seg {
  utf8?: string;
  tOffsetMs?: number;
}
interface Json3Event {
  tStartMs?: number;
  dDurationMs?: number;
  segs?: Json3Seg[];
}

function parseJson3(body: string): RawCue[] {
  let doc: { events?: Json3Event[] };
  try {
    doc = JSON.parse(body) as { events?: Json3Event[] };
  } catch (err) {
    throw new TimedTextParseError(`json3 body is not JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(doc.events)) throw new TimedTextParseError('json3 body has no events');
  const out: RawCue[] = [];
  for (const ev of doc.events) {
    const segs = ev.segs;
    if (!segs) continue; // window/style definitions
    let raw = '';
    for (const s of segs) raw += s.utf8 ?? '';
    out.push({
      start: (ev.tStartMs ?? 0) / 1000,
      duration: (ev.dDurationMs ?? 0) / 1000,
      text: raw,
      segs: segs.map((s) => ({
        text: s.utf8 ?? '',
        offsetMs: typeof s.tOffsetMs === 'number' && Number.isFinite(s.tOffsetMs) ? s.tOffsetMs : undefined,
      })),
    });
  }
  return out;
}

const ATTR = /([a-zA-Z_:][\w:.-]*)\s*=\s*"([^"]*)"/g;

function attrs(s: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of s.matchAll(ATTR)) out[m[1] as string] = m[2] as string;
  return out;
}

function parseXml(body: string, tag: 'p' | 'text', unit: 'ms' | 's'): RawCue[] {
  const re =
    tag === 'p' ? /<p\b([^>]*?)(?:\/>|>([\s\S]*?)<\/p>)/g : /<text\b([^>]*?)(?:\/>|>([\s\S]*?)<\/text>)/g;
  const out: RawCue[] = [];
  for (const m of body.matchAll(re)) {
    const a = attrs(m[1] ?? '');
    const start = Number(unit === 'ms' ? a.t : a.start);
    const dur = Number(unit === 'ms' ? a.d : a.dur);
    if (!Number.isFinite(start)) continue;
    const div = unit === 'ms' ? 1000 : 1;
    out.push({ start: start / div, duration: Number.isFinite(dur) ? dur / div : 0, text: m[2] ?? '' });
  }
  return out;
}

export interface ParseOptions {
  /** Auto-generated tracks repeat the previous line in each cue; remove that ("rolling" captions). */
  dedupeRolling?: boolean;
  /** Give each segment the word times its json3 event carries (`segs[].tOffsetMs`), where it has them. */
  words?: boolean;
}

/**
 * The words of a json3 event whose segs are one word each, timed (an auto-generated line: the
 * first seg at the event's start, every other at its `tOffsetMs`); each word ends where the next
 * begins, the last with the event. Undefined for any other event (a manual cue, styled runs of a
 * manual cue without offsets, a repeated line): its source times no words.
 */
function wordsOf(cue: RawCue): Word[] | undefined {
  if (!cue.segs) return undefined;
  const segs = cue.segs
    .map((s) => ({ text: cleanText(s.text), offsetMs: s.offsetMs }))
    .filter((s) => s.text !== '');
  if (segs.length < 2 || segs.slice(1).some((s) => s.offsetMs === undefined)) return undefined;
  if (segs.some((s) => /\s/.test(s.text))) return undefined;
  const timed = segs.map((s) => ({ text: s.text, offset: s.offsetMs ?? 0 }));
  const end = cue.start + Math.max(0, cue.duration);
  return timed.map((s, i) => {
    const start = cue.start + s.offset / 1000;
    const next = timed[i + 1];
    const until = next ? cue.start + next.offset / 1000 : end;
    return { text: s.text, start: round3(start), end: round3(Math.max(start, until)) };
  });
}

export function parseTimedText(body: string, options: ParseOptions = {}): Segment[] {
  const format = detectFormat(body);
  const raw =
    format === 'json3'
      ? parseJson3(body)
      : format === 'srv3'
        ? parseXml(body, 'p', 'ms')
        : parseXml(body, 'text', 's');
  const segments: Segment[] = [];
  for (const c of raw) {
    const t = cleanText(c.text);
    if (t.length === 0) continue;
    const segment: Segment = { text: t, start: round3(c.start), duration: round3(Math.max(0, c.duration)) };
    const words = options.words ? wordsOf(c) : undefined;
    if (words) segment.words = words;
    segments.push(segment);
  }
  const deduped = options.dedupeRolling ? removeRollingRepetition(segments) : segments;
  for (const s of deduped) if (s.text.includes('\n')) s.text = s.text.replace(/\n/g, ' ');
  return deduped;
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/**
 * Rolling captions show a two-line window: each cue repeats the line(s) already on screen and adds one.
 * Drop the longest prefix of a cue's lines that equals a suffix of the previous cue's lines; a cue that is
 * nothing but repetition extends the previous cue instead. Also handles word-by-word growth on one line
 * ("hello" → "hello world").
 */
export function removeRollingRepetition(segments: Segment[]): Segment[] {
  const out: Segment[] = [];
  let prevLines: string[] = [];
  for (const seg of segments) {
    const lines = seg.text.includes('\n') ? seg.text.split('\n') : [seg.text];
    let k = Math.min(prevLines.length, lines.length);
    for (; k > 0; k--) {
      let match = true;
      for (let i = 0; i < k; i++) {
        if (prevLines[prevLines.length - k + i] !== lines[i]) {
          match = false;
          break;
        }
      }
      if (match) break;
    }
    let rest = lines.slice(k);
    const last = out[out.length - 1];
    if (last && rest.length > 0 && k === 0) {
      // same line growing word by word
      const prevLast = prevLines[prevLines.length - 1];
      const first = rest[0] as string;
      if (prevLast && first.length > prevLast.length && first.startsWith(prevLast + ' ')) {
        rest = [first.slice(prevLast.length + 1), ...rest.slice(1)];
      }
    }
    prevLines = lines;
    if (rest.length === 0) {
      if (last) last.duration = round3(Math.max(last.duration, seg.start + seg.duration - last.start));
      continue;
    }
    const text = rest.join('\n');
    // A cue cut down to its new part keeps no word times: they timed the whole cue.
    out.push({
      text,
      start: seg.start,
      duration: seg.duration,
      ...(seg.words && text === seg.text ? { words: seg.words } : {}),
    });
  }
  return out;
}
