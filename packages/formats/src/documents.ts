import { toCues } from './cues.ts';
import { clockTime, srtTimestamp, vttTimestamp } from './time.ts';
import { cueLine } from './text.ts';
import type { DocumentFormat, DocumentInput, OutputFormat, Segment } from './types.ts';

/** SubRip: numbered cues, `HH:MM:SS,mmm --> HH:MM:SS,mmm`, text, a blank line between cues. */
export function toSrt(segments: readonly Segment[]): string {
  return toCues(segments)
    .map(
      (cue, i) =>
        `${i + 1}\n${srtTimestamp(cue.startMs)} --> ${srtTimestamp(cue.endMs)}\n${cue.lines.join('\n')}\n`,
    )
    .join('\n');
}

// In WebVTT cue text `&` and `<` start entities and tags; `>` is escaped too so that no text can
// ever read as an arrow.
function escapeVtt(line: string): string {
  return line.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** WebVTT: `WEBVTT` header, blank line, cues with `HH:MM:SS.mmm --> HH:MM:SS.mmm` and text. */
export function toVtt(segments: readonly Segment[]): string {
  const cues = toCues(segments).map(
    (cue) =>
      `${vttTimestamp(cue.startMs)} --> ${vttTimestamp(cue.endMs)}\n${cue.lines.map(escapeVtt).join('\n')}\n`,
  );
  return cues.length === 0 ? 'WEBVTT\n' : `WEBVTT\n\n${cues.join('\n')}`;
}

/** One line per segment, no timing. */
export function toTxt(segments: readonly Segment[]): string {
  return toCues(segments)
    .map((cue) => `${cue.lines.join(' ')}\n`)
    .join('');
}

// Title and channel are single-line plain text in the heading and the info lines.
function oneLine(text: string): string {
  return cueLine(text);
}

/**
 * Markdown: title heading, channel and duration lines, a Transcript heading, then one line per
 * segment, prefixed by `[M:SS]` when timestamps are included.
 */
export function toMarkdown(input: DocumentInput): string {
  const { metadata } = input;
  const lines = toCues(input.segments).map((cue) => {
    const text = cue.lines.join(' ');
    return input.includeTimestamps ? `[${clockTime(cue.startMs / 1000)}] ${text}` : text;
  });
  const head = [
    `# ${oneLine(metadata.title) || 'Untitled'}`,
    '',
    // Two trailing spaces: a Markdown line break, so channel and duration render on their own lines.
    `**Channel:** ${oneLine(metadata.channel)}  `,
    `**Duration:** ${clockTime(metadata.duration)}`,
    '',
    '## Transcript',
    '',
  ];
  return `${[...head, ...lines].join('\n')}\n`;
}

/**
 * Plain-text mode of the JSON result: every segment's text on one line, joined by single spaces,
 * in start order (the same text the txt document has, without line breaks).
 */
export function toPlainText(segments: readonly Segment[]): { text: string; segmentCount: number } {
  return {
    text: toCues(segments)
      .map((cue) => cue.lines.join(' '))
      .join(' '),
    segmentCount: segments.length,
  };
}

export const CONTENT_TYPES: Record<OutputFormat, string> = {
  json: 'application/json; charset=utf-8',
  srt: 'text/srt; charset=utf-8',
  vtt: 'text/vtt; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
};

/** The document for a non-JSON format; identical bytes wherever it is rendered (extract, batch, playlist). */
export function renderDocument(format: DocumentFormat, input: DocumentInput): string {
  switch (format) {
    case 'srt':
      return toSrt(input.segments);
    case 'vtt':
      return toVtt(input.segments);
    case 'txt':
      return toTxt(input.segments);
    case 'md':
      return toMarkdown(input);
  }
}
