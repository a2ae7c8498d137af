/**
 * The end of `npm test`: what ran against real engines, a browser and external tools, what was
 * skipped and why, the one command that turns each skipped kind on, and the plain count line
 * `N passed, N failed[, N skipped]`. Pure formatting; the data comes from the vitest reporter
 * `scripts/test-summary-reporter.ts`, which reads what `describeWithEngine` / `describeWithBrowser`
 * (packages/testing) recorded on each suite.
 */
import type { SuiteRequirement } from '@subx/testing/requirements';

export interface RequirementSuite {
  requirement: SuiteRequirement;
  /** `file > suite`, for the list of skipped suites. */
  suite: string;
  /** Tests of the suite that were skipped because the requirement was missing. */
  skippedTests: number;
}

export interface SummaryInput {
  suites: RequirementSuite[];
  tests: { passed: number; failed: number; skipped: number };
  /** Skipped tests not explained by a missing requirement (it.skip, todo, skipIf). */
  otherSkipped: number;
  /** Test files that failed before running any test (import or collection errors). */
  failedFiles: number;
  /** Errors outside any test (unhandled rejections, worker crashes). */
  unhandledErrors: number;
}

const KIND_LABEL: Record<SuiteRequirement['kind'], string> = {
  engine: 'real engines',
  browser: 'browser',
  tool: 'tools',
};

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function countBy<T>(items: T[], key: (item: T) => string): [string, number][] {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return [...counts].sort(([a], [b]) => a.localeCompare(b));
}

export function formatSummary(input: SummaryInput): string[] {
  const lines = ['', 'Test summary'];
  const ran = input.suites.filter((s) => s.requirement.ran);
  const missed = input.suites.filter((s) => !s.requirement.ran);
  for (const kind of ['engine', 'browser', 'tool'] as const) {
    const ranOfKind = ran.filter((s) => s.requirement.kind === kind);
    const missedOfKind = missed.filter((s) => s.requirement.kind === kind);
    if (ranOfKind.length === 0 && missedOfKind.length === 0) continue;
    const byName = countBy(ranOfKind, (s) => s.requirement.name)
      .map(([name, n]) => `${name} ${n}`)
      .join(', ');
    lines.push(
      `  ${`${KIND_LABEL[kind]}:`.padEnd(14)}${plural(ranOfKind.length, 'suite')} ran` +
        (byName ? ` (${byName})` : '') +
        (missedOfKind.length ? `, ${missedOfKind.length} skipped` : ''),
    );
  }
  // Where the engines came from, so a run says whether it used the environment or testcontainers.
  const engines = countBy(
    input.suites.filter((s) => s.requirement.kind === 'engine'),
    (s) =>
      `${s.requirement.name} ${s.requirement.ran ? `via ${s.requirement.via ?? 'the environment'}` : 'not available'}`,
  );
  if (engines.length > 0)
    lines.push(`  engines:      ${[...new Set(engines.map(([what]) => what))].join(', ')}`);
  if (missed.length > 0) {
    const tests = missed.reduce((sum, s) => sum + s.skippedTests, 0);
    lines.push(`  skipped:      ${plural(missed.length, 'suite')} (${plural(tests, 'test')}), and why:`);
    for (const [why, n] of countBy(
      missed,
      (s) => `${s.requirement.name}: ${s.requirement.reason ?? 'not available'}`,
    ))
      lines.push(`    ${plural(n, 'suite')}  ${why}`);
    const commands = [...new Set(missed.map((s) => s.requirement.enable))];
    lines.push(`  turn them on: ${commands.join('   and   ')}`);
  } else if (input.suites.length > 0) {
    lines.push('  skipped:      nothing for a missing engine, browser or tool');
  }
  if (input.otherSkipped > 0)
    lines.push(`  also skipped: ${plural(input.otherSkipped, 'test')} marked skip or todo in the code`);
  // A file that never ran and an error outside any test fail the run as surely as a failed test,
  // so they count as failures in the last line: it never says "0 failed" for a failed run.
  if (input.failedFiles > 0)
    lines.push(`  failed files: ${plural(input.failedFiles, 'test file')} failed before running any test`);
  if (input.unhandledErrors > 0)
    lines.push(`  errors:       ${plural(input.unhandledErrors, 'error')} outside any test`);
  const { passed, skipped } = input.tests;
  const failed = input.tests.failed + input.failedFiles + input.unhandledErrors;
  lines.push(`${passed} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : ''));
  return lines;
}
