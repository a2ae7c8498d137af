// Image build step (deploy/docker/Dockerfile, prune stage): removes `devDependencies` from the
// workspace manifests given as arguments, so that `turbo prune` follows only what a service needs
// at run time. The root manifest keeps its own: the deps stage deletes those before `npm ci`.
//   node deploy/docker/runtime-manifests.mjs services/*/package.json packages/*/package.json
import { readFileSync, writeFileSync } from 'node:fs';

for (const file of process.argv.slice(2)) {
  const manifest = JSON.parse(readFileSync(file, 'utf8'));
  if (!manifest.devDependencies) continue;
  delete manifest.devDependencies;
  writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
}
