/**
 * Summarises a V8 CPU profile (.cpuprofile, from `node --cpu-prof`): self time by package or
 * source folder, and the top functions by self time, so a benchmark's "where does the time go"
 * can be written down without opening DevTools.
 *
 *   node_modules/.bin/node scripts/bench/cpu-profile-summary.ts PROFILE.cpuprofile [--top 25]
 *     [--callers NAME]   (also: the call stacks that lead to the function NAME, by self time)
 *     [--busy]           (only the half-seconds in which the process was at least 80% busy: the
 *                         load, without start-up and the waits between a benchmark's runs)
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    top: { type: 'string', default: '25' },
    callers: { type: 'string' },
    busy: { type: 'boolean', default: false },
  },
});
const file = positionals[0];
if (!file) throw new Error('usage: cpu-profile-summary.ts PROFILE.cpuprofile [--top N]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const WINDOW_US = 500_000;
const windowOf = (() => {
  let at = 0;
  return profile.timeDeltas.map((delta) => Math.floor((at += delta) / WINDOW_US));
})();
/** With --busy, the windows whose samples are at most 20% idle. */
const busyWindows = new Set<number>();
if (values.busy) {
  const idleId = profile.nodes.find((n) => n.callFrame.functionName === '(idle)')?.id;
  const perWindow = new Map<number, { idle: number; all: number }>();
  profile.samples.forEach((id, i) => {
    const w = perWindow.get(windowOf[i]!) ?? { idle: 0, all: 0 };
    const us = profile.timeDeltas[i] ?? 0;
    w.all += us;
    if (id === idleId) w.idle += us;
    perWindow.set(windowOf[i]!, w);
  });
  for (const [w, { idle, all }] of perWindow) if (idle <= 0.2 * all) busyWindows.add(w);
}
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => {
  if (values.busy && !busyWindows.has(windowOf[i]!)) return;
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

/** A package name from node_modules, a workspace folder, node's internals, or the V8 pseudo frames. */
function bucket(url: string, name: string): string {
  if (!url) return `(${name || 'native'})`;
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  if (url.startsWith('node:'))
    return url
      .replace(/^node:(internal\/)?/, 'node:')
      .split('/')
      .slice(0, 2)
      .join('/');
  const ws = /\/(packages|services|scripts)\/([^/]+)\/(?:src\/)?([^/]+)/.exec(url);
  return ws ? `${ws[1]}/${ws[2]}/${ws[3]}` : url;
}

const buckets = new Map<string, number>();
const functions = new Map<string, number>();
for (const [id, us] of selfUs) {
  const node = byId.get(id)!;
  const { url, functionName, lineNumber } = node.callFrame;
  const b = bucket(url, functionName);
  buckets.set(b, (buckets.get(b) ?? 0) + us);
  const f = `${functionName || '(anonymous)'} ${b}:${lineNumber + 1}`;
  functions.set(f, (functions.get(f) ?? 0) + us);
}
const top = Number(values.top);
const show = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`);
};
console.log(`${file}: ${(total / 1e6).toFixed(1)} s of samples`);
show('self time by package / folder', buckets);
show('self time by function', functions);

if (values.callers) {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stacks = new Map<string, number>();
  for (const [id, us] of selfUs) {
    if (byId.get(id)!.callFrame.functionName !== values.callers) continue;
    const frames: string[] = [];
    for (
      let at: number | undefined = parent.get(id);
      at !== undefined && frames.length < 12;
      at = parent.get(at)
    ) {
      const f = byId.get(at)!.callFrame;
      if (f.functionName === '(root)') break;
      frames.push(`${f.functionName || '(anonymous)'} ${bucket(f.url, f.functionName)}:${f.lineNumber + 1}`);
    }
    const key = frames.join(' < ');
    stacks.set(key, (stacks.get(key) ?? 0) + us);
  }
  show(`stacks leading to ${values.callers}`, stacks);
}
