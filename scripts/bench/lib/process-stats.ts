/** What the benchmarks read of a process from /proc (Linux): its CPU time and its memory. */
import { readFileSync } from 'node:fs';

/** Linux clock ticks per second (USER_HZ), the unit of utime and stime in /proc/PID/stat. */
const CLOCK_TICKS = 100;

/** CPU time (user + system) of a process, in milliseconds. */
export function cpuMsOf(pid: number): number {
  // The command name (field 2) may hold spaces: the fields after its closing parenthesis.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/** A memory figure of /proc/PID/status in bytes: the resident set (VmRSS) or its peak (VmHWM). */
export function statusBytesOf(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
}

/** The middle value; of an even count the upper of the two middle ones; 0 of none. */
export const upperMedian = (xs: number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
