/**
 * Dates as people read them ("26 Nov 2026, 14:03 UTC"), in a <time> element whose datetime
 * attribute keeps the exact ISO instant for machines (and for anyone who copies it).
 */
import type { Html } from './html.ts';
import { html } from './html.ts';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** "26 Nov 2026, 14:03 UTC"; a value that is not a date comes back unchanged. */
export function utcText(iso: string): string {
  const at = new Date(iso);
  if (!iso || Number.isNaN(at.getTime())) return iso;
  const hh = String(at.getUTCHours()).padStart(2, '0');
  const mm = String(at.getUTCMinutes()).padStart(2, '0');
  return `${at.getUTCDate()} ${MONTHS[at.getUTCMonth()]!} ${at.getUTCFullYear()}, ${hh}:${mm} UTC`;
}

/** "26 Nov": a day of the current 30 days (chart labels), from "2026-11-26". */
export function dayText(date: string): string {
  const at = new Date(`${date.slice(0, 10)}T00:00:00Z`);
  if (Number.isNaN(at.getTime())) return date;
  return `${at.getUTCDate()} ${MONTHS[at.getUTCMonth()]!}`;
}

/** `<time datetime="ISO">26 Nov 2026, 14:03 UTC</time>`; plain text when the value is not a date. */
export function timeTag(iso: string): Html {
  const text = utcText(iso);
  return text === iso ? html`${iso}` : html`<time datetime="${iso}">${text}</time>`;
}
