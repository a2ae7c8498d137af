/**
 * The load and the table of the extract benchmarks on what users run (npm-start-extract.ts on
 * `npm start`, compose-extract.ts on the images under docker compose): autocannon POSTs of one
 * extract body at a bare fastify route serving the same bytes, at the cached path and at the
 * uncached one, round after round, and the ratios to bare per round (machines here are noisy).
 */
import autocannon from 'autocannon';

export interface Measured {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

export interface Target {
  url: string;
  headers: Record<string, string>;
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
  const result = await autocannon({
    url: target.url,
    method: 'POST',
    connections,
    duration,
    headers: { 'content-type': 'application/json', ...target.headers },
    body,
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
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

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
export const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

export interface PathFigures {
  ratio: number;
  ratios: number[];
  rps: number;
  p50: number;
  p99: number;
  /** Non-2xx answers and transport errors over every round. */
  failed: number;
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
  };
}

export const TABLE_HEADER =
  '| answer | path | requests/s | % of bare (median; rounds) | p50 ms | p99 ms | non-2xx | target |\n' +
  '|---|---|---:|---:|---:|---:|---:|---|';

export function tableRow(answer: string, path: PathName, f: PathFigures, target: string): string {
  return (
    `| ${answer} | ${path} | ${f.rps.toFixed(0)} | ${pct(f.ratio)} (${f.ratios.map(pct).join(', ')}) | ` +
    `${f.p50} | ${f.p99} | ${f.failed} | ${target} |`
  );
}
