/**
 * Reads the output of benchmark runs (files, or standard input) and prints one table of every
 * `bench-result` line (scripts/bench/lib/result.ts): what, the figure, the target, met or not. Exits 1
 * when a target was not met or no result was found.
 *
 *   node_modules/.bin/node scripts/bench/summary.ts OUTPUT.log [...]
 */
import { readFileSync } from 'node:fs';
import { RESULT_PREFIX, type BenchResult } from './lib/result.ts';

const files = process.argv.slice(2);
const text = files.length ? files.map((f) => readFileSync(f, 'utf8')).join('\n') : readFileSync(0, 'utf8');
const results = text
  .split('\n')
  .filter((line) => line.startsWith(RESULT_PREFIX))
  .map((line) => JSON.parse(line.slice(RESULT_PREFIX.length)) as BenchResult);

console.log('\n| benchmark | what | result | target | |');
console.log('|---|---|---:|---|---|');
for (const r of results)
  console.log(`| ${r.bench} | ${r.what} | ${r.value} | ${r.target} | ${r.met ? 'met' : '**NOT met**'} |`);
const missed = results.filter((r) => !r.met).length;
console.log(
  results.length === 0
    ? '\nno benchmark result found'
    : `\n${results.length - missed} of ${results.length} targets met`,
);
process.exitCode = results.length > 0 && missed === 0 ? 0 : 1;
