// Unused files, exports and dependencies (`npm test`, scripts/check-dependencies.sh). Knip follows
// imports from the entry files: each workspace's package.json (exports, scripts), the vitest and
// eslint configs it finds, and the entries below, each of which something runs by path.
import type { KnipConfig } from 'knip';

const config: KnipConfig = {
  workspaces: {
    '.': {
      entry: [
        // run by path: package.json scripts, scripts/test.sh, .ci/run, scripts/*.sh
        'scripts/*.{ts,mjs}',
        // scripts/bench/run-all.sh runs every scripts/bench/<name>.ts by name
        'scripts/bench/*.ts',
        // scripts/kube-schemas/kube-validate.sh
        'scripts/kube-schemas/*.ts',
        // the compose demo container's command (deploy/docker/demo.Dockerfile), the image build
        // step (deploy/docker/Dockerfile) and the chart's `helm test` script (files/, ConfigMap)
        'deploy/docker/demo/main.ts',
        'deploy/docker/*.mjs',
        'deploy/helm/subx/files/*.mjs',
        // the fake platform image of the cluster test (test/cluster/youtube/Dockerfile)
        'test/cluster/youtube/main.ts',
        // child processes and sample projects the tests start by path
        'test/**/fixtures/*.ts',
        // the generated-client driver (test/system/generated-clients.test.ts copies it beside the
        // types it generates from the live API, then type-checks and runs it)
        'test/system/generated-clients/driver.ts',
      ],
      project: ['scripts/**/*.{ts,mjs}', 'test/**/*.ts', 'deploy/**/*.{ts,mjs}'],
      // generated beside the driver by that test
      ignoreUnresolved: ['./schema.d.ts'],
      ignoreDependencies: [
        // buf runs it as a local plugin (proto/buf.gen.yaml: ../node_modules/.bin/protoc-gen-ts_proto)
        'ts-proto',
        // scripts/release.sh runs its binary on each image's workspace (the SBOM)
        '@cyclonedx/cyclonedx-npm',
      ],
    },
    'services/gateway': {
      // scripts/backup-restore.ts encrypts backups with it; the gateway's image is where operators
      // run that script (deploy/docker/Dockerfile), and a root devDependency is not in an image
      ignoreDependencies: ['age-encryption'],
    },
    'packages/service-kit': {
      // child processes of the telemetry tests (`node --import ./memory-telemetry.ts traced-app.ts`)
      entry: ['test/fixtures/*.ts'],
    },
    'services/dashboard': {
      // served to browsers as /static/app.js
      entry: ['static/*.js'],
      // read from disk into the browser page (require.resolve('axe-core/axe.min.js')), not imported
      ignoreDependencies: ['axe-core'],
    },
  },
  // Debian's, not npm's: installed by scripts/engines.sh (Redis, Kafka's JVM) and .ci/run (ffmpeg
  // for the extractor's audio cuts; espeak-ng and sox for the speech engine's tests and benchmark).
  ignoreBinaries: ['redis-server', 'redis-cli', 'java', 'ffmpeg', 'ffprobe', 'espeak-ng', 'sox', 'soxi'],
};

export default config;
