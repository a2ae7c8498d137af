import { readFileSync } from 'node:fs';
const [file, topS] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file!, 'utf8'));
const byId = new Map<number, any>(p.nodes.map((n: any) => [n.id, n]));
let t = 0; const times: number[] = [];
for (const d of p.timeDeltas) { t += d; times.push(t); }
const buckets = new Map<number, number>();
p.samples.forEach((s: number, i: number) => { if (byId.get(s).callFrame.functionName !== '(idle)') { const b = Math.floor(times[i]! / 1e6); buckets.set(b, (buckets.get(b) ?? 0) + (p.timeDeltas[i] ?? 0)); } });
const hot = new Set<number>(); for (const [b, v] of buckets) if (v > 0.8e6 && b >= Number(process.env.MINB ?? 9)) hot.add(b);
const self = new Map<string, number>(); let total = 0;
p.samples.forEach((s: number, i: number) => {
  if (!hot.has(Math.floor(times[i]! / 1e6))) return;
  const dt = p.timeDeltas[i] ?? 0; total += dt;
  const cf = byId.get(s).callFrame;
  const url = cf.url.replace(/^.*node_modules\//, '').replace(/^.*\/work\/main\//, '');
  const key = `${cf.functionName || '(anon)'} ${url}:${cf.lineNumber}`;
  self.set(key, (self.get(key) ?? 0) + dt);
});
[...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(topS ?? 50)).forEach(([k, v]) => console.log((100 * v / total).toFixed(1).padStart(6) + '%  ' + k));
