import { describe, expect, it } from 'vitest';
import { formatSummary } from './test-summary.ts';

const engine = (name: string, ran: boolean, via?: string) => ({
  requirement: {
    kind: 'engine' as const,
    name,
    ran,
    enable: 'eval "$(bash scripts/engines.sh up)"',
    ...(ran ? { via } : { reason: `${name} missing` }),
  },
  suite: `x.test.ts > ${name}`,
  skippedTests: ran ? 0 : 2,
});

describe('formatSummary', () => {
  it('counts suites per engine and says nothing was skipped when all ran', () => {
    const lines = formatSummary({
      suites: [
        engine('redis', true, 'REDIS_URL'),
        engine('kafka', true, 'testcontainers apache/kafka:4.2.0'),
        engine('redis', true, 'REDIS_URL'),
      ],
      tests: { passed: 10, failed: 0, skipped: 0 },
      otherSkipped: 0,
      failedFiles: 0,
      unhandledErrors: 0,
    });
    expect(lines.slice(1)).toEqual([
      'Test summary',
      '  real engines: 3 suites ran (kafka 1, redis 2)',
      '  engines:      kafka via testcontainers apache/kafka:4.2.0, redis via REDIS_URL',
      '  skipped:      nothing for a missing engine, browser or tool',
      '10 passed, 0 failed',
    ]);
  });

  it('never ends with "0 failed" when a file failed to load or an error escaped the tests', () => {
    const lines = formatSummary({
      suites: [engine('mongo', false)],
      tests: { passed: 3, failed: 0, skipped: 2 },
      otherSkipped: 0,
      failedFiles: 1,
      unhandledErrors: 1,
    });
    expect(lines).toContain('  failed files: 1 test file failed before running any test');
    expect(lines).toContain('  errors:       1 error outside any test');
    expect(lines).toContain('    1 suite  mongo: mongo missing');
    expect(lines).toContain('  engines:      mongo not available');
    expect(lines.at(-1)).toBe('3 passed, 2 failed, 2 skipped');
  });
});
