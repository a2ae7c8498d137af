/**
 * The end-of-run summary of `npm test`, end to end: vitest runs sample suites (one with a missing
 * engine, one with an engine, one without a browser, a failing and a skipped test) with the real
 * reporters, in worker processes like the real run, and the summary must say what ran, what was
 * skipped and why, the commands that turn it on, and end with the count line.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe('npm test summary', () => {
  it('says what ran against engines, what was skipped and why, and ends with the counts', async () => {
    const { code, stdout } = await new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(
        process.execPath,
        ['node_modules/vitest/vitest.mjs', 'run', '--config', 'test/repo/fixtures/vitest.sample.config.ts'],
        {
          cwd: root,
          timeout: 90_000,
          env: {
            ...process.env,
            CI: '',
            REDIS_URL: '',
            KAFKA_BROKERS: '127.0.0.1:1',
            MONGO_URL: '',
            // no testcontainers fallback, whatever the machine has
            DOCKER_HOST: 'tcp://127.0.0.1:1',
            CHROMIUM_PATH: '/nonexistent/chromium',
            NO_COLOR: '1',
            FORCE_COLOR: '0',
          },
        },
        (error, out) => resolve({ code: error ? Number(error.code) : 0, stdout: out }),
      );
    });
    expect(code, stdout).toBe(1); // one test fails on purpose
    const summary = stdout.slice(stdout.lastIndexOf('Test summary')).trim().split('\n');
    expect(summary).toEqual([
      'Test summary',
      '  real engines: 1 suite ran (kafka 1), 1 skipped',
      '  browser:      0 suites ran, 1 skipped',
      '  engines:      kafka via KAFKA_BROKERS, redis not available',
      '  skipped:      2 suites (3 tests), and why:',
      '    1 suite  chromium: no Chromium found (or CHROMIUM_PATH)',
      '    1 suite  redis: REDIS_URL not set and no Docker engine for testcontainers',
      '  turn them on: eval "$(bash scripts/engines.sh up)"   and   bash scripts/install-browser.sh',
      '  also skipped: 1 test marked skip or todo in the code',
      '2 passed, 1 failed, 4 skipped',
    ]);
  }, 120_000);
});
