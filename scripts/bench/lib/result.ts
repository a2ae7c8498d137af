/**
 * One line per measured figure that has a target, in a form `scripts/bench/summary.ts` collects
 * into the one table `npm run bench` ends with. Each benchmark keeps its own detailed output; this
 * line is the figure that goes into the README's table.
 */
export interface BenchResult {
  /** The benchmark's file name without `.ts`. */
  bench: string;
  /** What was measured, e.g. "cached extract, 40 segments, % of bare". */
  what: string;
  /** The figure as printed, e.g. "62.3%" or "0.68x". */
  value: string;
  /** The target as printed, e.g. ">= 60%". */
  target: string;
  met: boolean;
}

export const RESULT_PREFIX = 'bench-result ';

export function reportResult(result: BenchResult): void {
  console.log(RESULT_PREFIX + JSON.stringify(result));
}
