/**
 * Cue text hygiene shared by every format. Segment text arrives as plain text from the extractor
 * (the YouTube client strips markup and decodes entities exactly once, see
 * packages/youtube/src/parse/timedtext.ts), so this module never decodes entities again: a cue
 * that reads `&lt;3` or `a < b` is content and stays so. It only removes what would break a
 * document: leftover caption markup, control characters, blank lines and the cue-timing arrow
 * `-->`, so a cue can never end early or fake a timing line.
 */

/**
 * Real caption markup, by name: the tags timedtext and SRT/VTT authors write (`<i>`, `</b>`,
 * `<font color="#E5E5E5">`, `<c.colorE5E5E5>`, `<v Roger>`, `<br/>`, srv3's `<s t="0" ac="0">`)
 * and WebVTT timestamps (`<00:00:01.000>`). A name list, not "anything between < and >", because
 * prose has angle brackets too: `x<y and y>z`, `<3`, `I <3 you > all` are content and survive.
 * Attributes must look like attributes (`name="value"`), so `a <b and c> d` is prose as well.
 */
const MARKUP =
  /<\/?(?:i|b|u|s|p|br|font|span|ruby|rt|rp|c|lang)(?:\.[\w.-]+)?(?:\s+[\w:-]+\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'<>]+))*\s*\/?>|<v(?:\.[\w.-]+)?\s[^<>\n]*>|<\/v>|<\d{1,2}(?::\d{2}){1,2}[.,]\d{3}>/gi;

const LINE_BREAK_TAG = /<br\s*\/?>/gi;

/** Caption markup removed (`<br>` becomes a line break); any other text, `<` included, is kept. */
export function stripMarkup(text: string): string {
  if (!text.includes('<')) return text;
  return text.replace(LINE_BREAK_TAG, '\n').replace(MARKUP, '');
}

// Control characters other than tab/newline break players; U+2028/2029 are line breaks in disguise.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\u2028\u2029]/g;

/**
 * The lines of a cue: plain text, no empty lines, no `-->`. Returns [] when nothing printable is
 * left (such a segment is skipped by every text format).
 */
export function cueLines(raw: string): string[] {
  const text = stripMarkup(raw).replace(CONTROL, '');
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
