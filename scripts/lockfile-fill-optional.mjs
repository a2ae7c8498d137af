#!/usr/bin/env node
// Keeps package-lock.json acceptable to `npm ci`. A registry mirror that serves only this platform does
// not serve other platforms' optional binaries (e.g. @turbo/darwin-64, @bufbuild/buf-win32-x64:
// 404), so `npm install` cannot record them, and `npm ci` then refuses the lock ("Missing: ... from
// lock file"). This adds a stub entry (name, version, optional, and os/cpu when the name says
// them) for every optional dependency the lock lacks; npm skips such entries on other platforms.
// Plain JS on purpose: it runs as the root postinstall, under whichever Node runs npm.
//   node scripts/lockfile-fill-optional.mjs          fix the lock in place
//   node scripts/lockfile-fill-optional.mjs --check  exit 1 if the lock needs fixing
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const lockPath = fileURLToPath(new URL('../package-lock.json', import.meta.url));
const check = process.argv.includes('--check');
const text = readFileSync(lockPath, 'utf8');
const lock = JSON.parse(text);
const packages = lock.packages ?? {};

const OS = [
  [/darwin|macos/, 'darwin'],
  [/win32|windows/, 'win32'],
  [/linux/, 'linux'],
  [/android/, 'android'],
  [/freebsd/, 'freebsd'],
];
const CPU = [
  [/arm64|aarch64/, 'arm64'],
  [/armv7|arm(?!64)/, 'arm'],
  [/x64|amd64|-64$/, 'x64'],
  [/ia32|x86(?!_64)/, 'ia32'],
];
const pick = (table, name) => table.find(([re]) => re.test(name))?.[1];

const missing = [];
for (const [path, entry] of Object.entries(packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    // Where npm would look for it: next to the dependent, or hoisted to the root.
    const nested = `${path ? `${path}/` : ''}node_modules/${dep}`;
    if (packages[nested] || packages[`node_modules/${dep}`]) continue;
    missing.push({ key: `node_modules/${dep}`, dep, version });
  }
}

if (missing.length === 0) process.exit(0);
if (check) {
  console.error(
    `package-lock.json lacks ${missing.length} optional platform entr${missing.length === 1 ? 'y' : 'ies'} ` +
      `(${missing.map((m) => m.dep).join(', ')}): run \`node scripts/lockfile-fill-optional.mjs\`.`,
  );
  process.exit(1);
}
for (const { key, dep, version } of missing) {
  const os = pick(OS, dep);
  const cpu = pick(CPU, dep);
  packages[key] = { version, optional: true, ...(cpu ? { cpu: [cpu] } : {}), ...(os ? { os: [os] } : {}) };
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)),
);
writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(
  `lockfile: added ${missing.length} optional platform stub entries (${missing.map((m) => m.dep).join(', ')})`,
);
