import { defineConfig } from 'vitest/config';

// Two projects: `unit` runs anywhere with embedded adapters only; `integration` talks to real
// engines (REDIS_URL / KAFKA_BROKERS / MONGO_URL from scripts/engines.sh, or testcontainers).
export default defineConfig({
  test: {
    pool: 'forks',
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
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['packages/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'test/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
