import { defineConfig } from 'vitest/config';

// Two projects: `unit` runs anywhere with embedded adapters only; `integration` talks to real
// engines (REDIS_URL / KAFKA_BROKERS / MONGO_URL from scripts/engines.sh, or testcontainers).
// A third, `containers` (test/containers), runs against the compose stack and exists only with
// CONTAINERS=1: `bash scripts/containers.sh test` (its own step in .ci/run) brings the stack up
// first, so `npm test` never depends on a Docker engine.
const containers = process.env.CONTAINERS === '1';
export default defineConfig({
  test: {
    pool: 'forks',
    // No engine container outlives the run, however a worker ends (packages/testing/src/containers-teardown.ts).
    globalSetup: ['./packages/testing/src/containers-teardown.ts'],
    // The summary at the end says what ran against real engines, a browser or helm, what was
    // skipped and why, and the command that turns it on (scripts/test-summary-reporter.ts).
    reporters: ['default', './scripts/test-summary-reporter.ts'],
    retry: process.env.CI ? 1 : 0,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['packages/*/src/**/*.test.ts', 'services/*/src/**/*.test.ts', 'scripts/**/*.test.ts'],
          testTimeout: 30_000,
          // A worker runs its files one after another in one module graph, not a fresh one per file:
          // the suite in well under half the time. Safe because no file depends on what ran before it
          // (`--sequence.shuffle --sequence.seed=N` runs stay green), so a new test must not either:
          // it restores what it changes process-wide (OpenTelemetry's globals, process.env, timers),
          // stops what it starts (servers, loops, subscriptions), and never assumes the metrics
          // registry (prom-client's, one per process) is empty: its own label values, or differences.
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['packages/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: ['test/containers/**'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      ...(containers
        ? [
            {
              extends: true,
              test: {
                name: 'containers',
                include: ['test/containers/**/*.test.ts'],
                // One stack: files that restart or scale services must not overlap.
                fileParallelism: false,
                retry: 0,
                testTimeout: 300_000,
                hookTimeout: 300_000,
              },
            },
          ]
        : []),
    ],
  },
});
