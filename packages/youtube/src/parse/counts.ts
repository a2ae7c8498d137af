/** Abbreviated counts ("1.2K", "9.8k", "21,051 Comments", "like this video along with 8,205 other people"). */
export function parseCount(input: string | undefined): number | undefined {
  if (input === undefined) return undefined;
  const s = input.trim();
  if (s === '') return 0;
  if (/^no\b/i.test(s)) return 0;
  const m = /(\d[\d,.\s]*)\s*([kmb])?(?![a-z])/i.exec(s);
  if (!m) return undefined;
  const digits = (m[1] as string).replace(/\s/g, '');
  const suffix = m[2]?.toLowerCase();
  if (suffix) {
    const value = Number(digits.replace(/,/g, '.'));
    if (!Number.isFinite(value)) return undefined;
    const mult = suffix === 'k' ? 1e3 : suffix === 'm' ? 1e6 : 1e9;
    return Math.round(value * mult);
  }
  // "21,051" / "21.051" (de) / "8 205": group separators only
  const n = Number(digits.replace(/[,.]/g, ''));
  return Number.isFinite(n) ? n : undefined;
}

const UNIT_SECONDS: Record<string, number> = {
  s: 1,
  sec: 1,
  second: 1,
  m: 60,
  min: 60,
  minute: 60,
  h: 3600,
  hr: 3600,
  hour: 3600,
  d: 86400,
  day: 86400,
  w: 604800,
  wk: 604800,
  week: 604800,
  mo: 2592000,
  month: 2592000,
  y: 31536000,
  yr: 31536000,
  year: 31536000,
};

/**
 * "3 days ago", "3 days ago (edited)", "5d ago", "1mo ago", "8 yr ago", "just now" → unix seconds relative to
 * `nowMs`. Months count 30 days and years 365 (the platform's own rounding is coarser than that).
 */
export function parseRelativeTime(input: string | undefined, nowMs: number): number {
  const now = Math.floor(nowMs / 1000);
  if (!input) return now;
  const s = input
    .toLowerCase()
    .replace(/\(edited\)/, '')
    .trim();
  if (/^(just now|now|today)\b/.test(s)) return now;
  if (/^yesterday\b/.test(s)) return now - 86400;
  const m =
    /(\d+)\s*(seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|wks?|w|months?|mos?|years?|yrs?|y)\s+ago/.exec(
      s,
    );
  if (!m) return now;
  const unit = (m[2] as string).replace(/s$/, '') || 's';
  const secs = UNIT_SECONDS[unit] ?? UNIT_SECONDS[m[2] as string] ?? 0;
  return now - Number(m[1]) * secs;
}
