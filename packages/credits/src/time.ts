/** UTC calendar helpers: days reset at 00:00 UTC, allowances at the first of the month 00:00 UTC. */
export function utcDate(ms: number): string {
  // Called several times per request (daily counter, request log, headers): the day's string is
  // kept until the clock leaves that day, instead of formatting a Date every time.
  if (!(ms >= lastDay.start && ms < lastDay.end)) {
    const start = ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
    lastDay = { start, end: start + DAY_MS, date: new Date(start).toISOString().slice(0, 10) };
  }
  return lastDay.date;
}

let lastDay = { start: 0, end: 0, date: '' };

export function utcMonth(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

export function nextUtcMidnight(ms: number): number {
  // JavaScript time has no leap seconds: every UTC day is DAY_MS long, so no Date is needed.
  return ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS) + DAY_MS;
}

const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

/** Parses a strict YYYY-MM-DD calendar date to its 00:00 UTC epoch ms; null if not a real date. */
export function parseUtcDate(value: unknown): number | null {
  if (typeof value !== 'string' || !DATE_PATTERN.test(value)) return null;
  const ms = Date.parse(`${value}T00:00:00.000Z`);
  if (Number.isNaN(ms) || utcDate(ms) !== value) return null;
  return ms;
}

export const DAY_MS = 86_400_000;
