/**
 * The load and the table of the extract benchmarks on what users run (npm-start-extract.ts on
 * `npm start`, compose-extract.ts on the images under docker compose): autocannon POSTs of one
 * extract body at a bare fastify route serving the same bytes, at the cached path and at the
 * uncached one, round after round, and the ratios to bare per round (machines here are noisy).
 */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

export interface Measured {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** CPU time of the server's main thread per answered request, in µs; undefined when not known. */
  cpuUs: number | undefined;
  /**
   * CPU time of the server's whole process per answered request (every thread: V8's garbage
   * collection helpers, libuv's pool), in µs. On a small machine the other threads share a core
   * with the load generator: work there slows the load as surely as work on the main thread.
   */
  processCpuUs: number | undefined;
}

export interface Target {
  url: string;
  headers: Record<string, string>;
  /**
   * The server's process on this machine (Linux): the CPU time its main thread (the event loop,
   * where every request is handled) spends per request is read around the load. The throughput
   * ratio also moves with whatever else the machine runs; the CPU time per request moves less.
   */
  pid?: number;
}

/** USER_HZ: /proc reports CPU time in these ticks per second (100 on Linux everywhere). */
const TICKS_PER_SECOND = 100;

/**
 * utime + stime of the process's main thread (or, `whole`, of all its threads), in ticks; undefined
 * without /proc.
 */
function cpuTicks(pid: number | undefined, whole = false): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(whole ? `/proc/${pid}/stat` : `/proc/${pid}/task/${pid}/stat`, 'utf8');
    // The name (field 2) is in parentheses and may hold spaces: count the fields after it.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]); // fields 14 and 15 of proc(5)
  } catch {
    return undefined;
  }
}

export type PathName = 'bare' | 'cached' | 'uncached';
export type Round = Record<PathName, Measured>;

export const PATHS: readonly PathName[] = ['bare', 'cached', 'uncached'];

export async function load(
  target: Target,
  body: string,
  duration: number,
  connections: number,
): Promise<Measured> {
  const ticksBefore = cpuTicks(target.pid);
  const processTicksBefore = cpuTicks(target.pid, true);
  const result = await autocannon({
    url: target.url,
    method: 'POST',
    connections,
    duration,
    headers: { 'content-type': 'application/json', ...target.headers },
    body,
  });
  const ticksAfter = cpuTicks(target.pid);
  const processTicksAfter = cpuTicks(target.pid, true);
  const answered = result.requests.total;
  const perRequest = (before: number | undefined, after: number | undefined) =>
    before === undefined || after === undefined || answered === 0
      ? undefined
      : ((after - before) * 1e6) / TICKS_PER_SECOND / answered;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    cpuUs: perRequest(ticksBefore, ticksAfter),
    processCpuUs: perRequest(processTicksBefore, processTicksAfter),
  };
}

/** A warm-up of each path (JIT, connections), then `rounds` rounds of bare, cached, uncached. */
export async function measureRounds(
  targets: Record<PathName, Target>,
  body: string,
  options: { rounds: number; duration: number; warmup: number; connections: number },
): Promise<Round[]> {
  for (const path of PATHS) await load(targets[path], body, options.warmup, options.connections);
  const rounds: Round[] = [];
  for (let round = 0; round < options.rounds; round++) {
    const measured = {} as Round;
    for (const path of PATHS) {
      measured[path] = await load(targets[path], body, options.duration, options.connections);
    }
    rounds.push(measured);
  }
  return rounds;
}

/** The middle value; of an even count, the mean of the two middle ones (two rounds: their mean, not the larger). */
export const median = (xs: number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return 0;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
export const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

export interface PathFigures {
  ratio: number;
  ratios: number[];
  rps: number;
  p50: number;
  p99: number;
  /** Non-2xx answers and transport errors over every round. */
  failed: number;
  /** Median CPU µs of the server's main thread per request; undefined when not read. */
  cpuUs: number | undefined;
  /** Median CPU µs of the server's whole process per request; undefined when not read. */
  processCpuUs: number | undefined;
}

/** The median, when every round has the figure. */
function medianOf(xs: (number | undefined)[]): number | undefined {
  const known = xs.filter((x) => x !== undefined);
  return known.length === xs.length ? median(known) : undefined;
}

/** The medians over the rounds of one path, and each round's ratio to that round's bare. */
export function figures(rounds: Round[], path: PathName): PathFigures {
  const ratios = rounds.map((r) => r[path].rps / r.bare.rps);
  return {
    ratio: median(ratios),
    ratios,
    rps: median(rounds.map((r) => r[path].rps)),
    p50: median(rounds.map((r) => r[path].p50)),
    p99: median(rounds.map((r) => r[path].p99)),
    failed: rounds.reduce((n, r) => n + r[path].non2xx + r[path].errors, 0),
    cpuUs: medianOf(rounds.map((r) => r[path].cpuUs)),
    processCpuUs: medianOf(rounds.map((r) => r[path].processCpuUs)),
  };
}

export const TABLE_HEADER =
  '| answer | path | requests/s | % of bare (median; rounds) | p50 ms | p99 ms | non-2xx | server CPU µs/request: main thread | whole process | target |\n' +
  '|---|---|---:|---:|---:|---:|---:|---:|---:|---|';

const cpu = (us: number | undefined) => (us === undefined ? '–' : us.toFixed(1));

export function tableRow(answer: string, path: PathName, f: PathFigures, target: string): string {
  return (
    `| ${answer} | ${path} | ${f.rps.toFixed(0)} | ${pct(f.ratio)} (${f.ratios.map(pct).join(', ')}) | ` +
    `${f.p50} | ${f.p99} | ${f.failed} | ${cpu(f.cpuUs)} | ${cpu(f.processCpuUs)} | ${target} |`
  );
}
