import { readFileSync } from 'node:fs';
const [file, topS] = process.argv.slice(2);
const p = JSON.parse(readFileSync(file!, 'utf8'));
const byId = new Map<number, any>(p.nodes.map((n: any) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
// timeline: find busiest 30 s window
let t = 0; const times: number[] = [];
for (const d of p.timeDeltas) { t += d; times.push(t); }
const busy = p.samples.map((s: number) => byId.get(s).callFrame.functionName !== '(idle)');
// 1s buckets
const buckets = new Map<number, number>();
times.forEach((tt, i) => { if (busy[i]) { const b = Math.floor(tt / 1e6); buckets.set(b, (buckets.get(b) ?? 0) + (p.timeDeltas[i] ?? 0)); } });
const bs = [...buckets.entries()].sort((a, b) => a[0] - b[0]);
console.log(bs.map(([b, v]) => `${b}:${Math.round(v / 1e4)}`).join(' '));
// window: buckets with >80% busy
const minB = Number(process.env.MINB ?? 0); const hot = new Set(bs.filter(([b, v]) => v > 0.8e6 && b >= minB).map(([b]) => b));
const incl = new Map<string, number>(); let total = 0;
p.samples.forEach((s: number, i: number) => {
  if (!hot.has(Math.floor(times[i]! / 1e6))) return;
  const dt = p.timeDeltas[i] ?? 0; total += dt;
  const seen = new Set<string>();
  let id: number | undefined = s;
  while (id !== undefined) {
    const cf = byId.get(id).callFrame;
    const url = cf.url.replace(/.*node_modules\//, '').replace(/^file:\/\/\/work\/main\//, '').replace(/^.*\/work\/main\//, '');
    const key = `${cf.functionName || '(anon)'} ${url}:${cf.lineNumber}`;
    if (!seen.has(key)) { seen.add(key); incl.set(key, (incl.get(key) ?? 0) + dt); }
    id = parent.get(id);
  }
});
console.log('hot seconds', hot.size, 'total', (total / 1e6).toFixed(1));
[...incl.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(topS ?? 80)).forEach(([k, v]) => console.log((100 * v / total).toFixed(1).padStart(6) + '%  ' + k));
