/** Integer milliseconds, never negative (a negative start would produce an unparsable timestamp). */
export function toMillis(seconds: number): number {
  return Number.isFinite(seconds) && seconds > 0 ? Math.round(seconds * 1000) : 0;
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}

function split(ms: number): { h: number; m: number; s: number; milli: number } {
  return {
    h: Math.floor(ms / 3_600_000),
    m: Math.floor(ms / 60_000) % 60,
    s: Math.floor(ms / 1000) % 60,
    milli: ms % 1000,
  };
}

/** HH:MM:SS,mmm */
export function srtTimestamp(ms: number): string {
  const t = split(ms);
  return `${pad(t.h, 2)}:${pad(t.m, 2)}:${pad(t.s, 2)},${pad(t.milli, 3)}`;
}

/** HH:MM:SS.mmm */
export function vttTimestamp(ms: number): string {
  const t = split(ms);
  return `${pad(t.h, 2)}:${pad(t.m, 2)}:${pad(t.s, 2)}.${pad(t.milli, 3)}`;
}

/** M:SS below one hour, H:MM:SS from one hour on (seconds truncated: a line starting at 59.9 s is [0:59]). */
export function clockTime(seconds: number): string {
  const total = Math.floor(toMillis(seconds) / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor(total / 60) % 60;
  const s = total % 60;
  return h > 0 ? `${h}:${pad(m, 2)}:${pad(s, 2)}` : `${m}:${pad(s, 2)}`;
}
