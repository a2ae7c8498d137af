/**
 * Cue text hygiene shared by every format. Segment text arrives mostly clean from the extractor,
 * but a document must never break because of it: markup is stripped, entities decoded, blank
 * lines removed and the cue-timing arrow `-->` neutralised, so a cue can never end early or
 * fake a timing line.
 */
import { decodeEntities } from './entities.ts';

// Tags as the platform and SRT/VTT authors write them: <i>, </b>, <font color="x">, <c.colorE5E5E5>,
// <00:00:01.000>. A lone "<" in prose ("a < b", "<3") is left alone.
const TAG = /<\/?[A-Za-z0-9][^<>]*>/g;
// Control characters other than tab/newline break players; U+2028/2029 are line breaks in disguise.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\u2028\u2029]/g;

/**
 * The lines of a cue: plain text, no empty lines, no `-->`. Returns [] when nothing printable is
 * left (such a segment is skipped by every text format).
 */
export function cueLines(raw: string): string[] {
  const text = decodeEntities(raw.replace(TAG, '')).replace(CONTROL, '');
  const lines: string[] = [];
  for (let line of text.split(/\r\n|\r|\n/)) {
    line = line.replace(/[ \t\u00A0]+/g, ' ').trim();
    // Replacing can create a new arrow ("--->" → "-->"), hence the loop.
    while (line.includes('-->')) line = line.replaceAll('-->', '->');
    if (line !== '') lines.push(line);
  }
  return lines;
}

/** The cue as one line (txt, md, plain-text json). */
export function cueLine(raw: string): string {
  return cueLines(raw).join(' ');
}
