/**
 * Tool output fit for a model's context: transcripts and comment lists cut into pages of about
 * PAGE_CHARS characters (a `cursor` names where the next page starts), and transcripts in
 * markdown with the title, the channel and chapters as headings, repeated lines dropped (rolling
 * auto-generated captions repeat the previous line). srt/vtt/txt pages come from @subx/formats,
 * the functions the HTTP API's documents are made with.
 */
import { toSrt, toTxt, toVtt } from '@subx/formats';
import { Errors } from '@subx/errors';

/** About 5,000 tokens of English: a page never floods an agent's context (documented in README). */
export const PAGE_CHARS = 20_000;
/** What one segment costs beyond its text in the longest format (srt: number, timing line, blank). */
const SEGMENT_OVERHEAD = 40;

export interface Segment {
  text: string;
  start: number;
  duration: number;
}

export interface Chapter {
  title: string;
  start_time: number;
}

export type TranscriptFormat = 'md' | 'txt' | 'srt' | 'vtt' | 'json';

/** `cursor` is the index of the first item of the page, as the previous page's `next_cursor` said. */
export function readCursor(cursor: unknown, total: number): number {
  if (cursor === undefined || cursor === null || cursor === '') return 0;
  const n = typeof cursor === 'string' && /^(0|[1-9]\d{0,8})$/.test(cursor) ? Number(cursor) : NaN;
  if (!Number.isInteger(n) || n > total) {
    throw Errors.invalidRequest(
      'arguments.cursor is not a cursor of this result; pass the next_cursor of the previous page.',
    );
  }
  return n;
}

/** The items from `first` whose estimated size fits PAGE_CHARS (at least one). */
export function pageOf<T>(items: readonly T[], first: number, size: (item: T) => number) {
  let end = first;
  let used = 0;
  while (end < items.length) {
    const cost = size(items[end]!);
    if (end > first && used + cost > PAGE_CHARS) break;
    used += cost;
    end += 1;
  }
  return { items: items.slice(first, end), first, end, nextCursor: end < items.length ? String(end) : null };
}

function clock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

const normalise = (text: string) => text.replace(/\s+/g, ' ').trim();

/** Segments of a page, with consecutive repeats (same text, case and spacing aside) dropped. */
export function dedupeLines(segments: readonly Segment[]): Segment[] {
  const out: Segment[] = [];
  let previous = '';
  for (const s of segments) {
    const key = normalise(s.text).toLowerCase();
    if (!key || key === previous) continue;
    previous = key;
    out.push(s);
  }
  return out;
}

export interface TranscriptPageInput {
  title: string;
  channel: string;
  duration: number;
  language: string;
  subtitleType: string;
  chapters: readonly Chapter[];
  segments: readonly Segment[];
  format: TranscriptFormat;
  includeTimestamps: boolean;
  cursor: unknown;
}

export function transcriptPage(input: TranscriptPageInput) {
  const first = readCursor(input.cursor, input.segments.length);
  const page = pageOf(input.segments, first, (s) => s.text.length + SEGMENT_OVERHEAD);
  const segments = page.items;
  let text: string;
  switch (input.format) {
    case 'srt':
      text = toSrt(segments);
      break;
    case 'vtt':
      text = toVtt(segments);
      break;
    case 'txt':
      text = toTxt(dedupeLines(segments));
      break;
    case 'json':
      text = JSON.stringify(segments);
      break;
    default:
      text = markdown(input, segments, first);
  }
  const paging = {
    cursor: String(first),
    next_cursor: page.nextCursor,
    first_segment: first,
    segment_count: segments.length,
    total_segments: input.segments.length,
  };
  if (page.nextCursor !== null) {
    text += `\n\n[Page ends at segment ${page.end} of ${input.segments.length}: call again with cursor "${page.nextCursor}" for the rest.]`;
  }
  return { text, segments, paging };
}

function markdown(input: TranscriptPageInput, segments: readonly Segment[], first: number): string {
  const lines: string[] = [];
  const title = input.title || 'Untitled video';
  lines.push(first === 0 ? `# ${title}` : `# ${title} (continued from segment ${first})`);
  const facts = [
    input.channel && `**Channel:** ${input.channel}`,
    input.duration > 0 && `**Duration:** ${clock(input.duration)}`,
    `**Language:** ${input.language} (${input.subtitleType.replace('_', '-')})`,
  ].filter(Boolean);
  lines.push(facts.join(' · '), '');
  const chapters = [...input.chapters].sort((a, b) => a.start_time - b.start_time);
  const chapterAt = (t: number) => chapters.filter((c) => c.start_time <= t + 0.001).at(-1);
  let current: Chapter | undefined;
  if (chapters.length === 0) lines.push('## Transcript', '');
  for (const s of dedupeLines(segments)) {
    const chapter = chapterAt(s.start) ?? chapters[0];
    if (chapter && chapter !== current) {
      current = chapter;
      if (lines.at(-1) !== '') lines.push('');
      lines.push(`## ${chapter.title} (${clock(chapter.start_time)})`, '');
    }
    const line = normalise(s.text);
    lines.push(input.includeTimestamps ? `[${clock(s.start)}] ${line}` : line);
  }
  return lines.join('\n').trimEnd();
}
