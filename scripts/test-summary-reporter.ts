/**
 * A vitest reporter (registered after 'default' in vitest.config.ts) that prints, at the end of a
 * run, the summary of `scripts/test-summary.ts`: suites that ran against real engines, a browser or
 * a tool, the ones skipped for want of them and why, the command that turns them on, and the
 * closing `N passed, N failed[, N skipped]` line.
 */
import type { Reporter, TestCase, TestModule, TestSuite } from 'vitest/node';
import { REQUIREMENT_META_KEY, type SuiteRequirement } from '@subx/testing/requirements';
import { formatSummary, type RequirementSuite } from './test-summary.ts';

const requirementOf = (entity: TestSuite | TestModule): SuiteRequirement | undefined =>
  (entity.meta() as Record<string, unknown>)[REQUIREMENT_META_KEY] as SuiteRequirement | undefined;

/** The nearest enclosing suite that recorded a requirement. */
function enclosingRequirement(test: TestCase): SuiteRequirement | undefined {
  for (let parent: TestSuite | TestModule = test.parent; ; parent = parent.parent) {
    const requirement = requirementOf(parent);
    if (requirement) return requirement;
    if (parent.type === 'module') return undefined;
  }
}

export default class TestSummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    const suites: RequirementSuite[] = [];
    const tests = { passed: 0, failed: 0, skipped: 0 };
    let otherSkipped = 0;
    let failedFiles = 0;
    for (const module of testModules) {
      if (module.errors().length > 0 && [...module.children.allTests()].length === 0) failedFiles++;
      for (const suite of module.children.allSuites()) {
        const requirement = requirementOf(suite);
        if (!requirement) continue;
        suites.push({
          requirement,
          suite: `${module.relativeModuleId} > ${suite.fullName}`,
          skippedTests: requirement.ran ? 0 : [...suite.children.allTests('skipped')].length,
        });
      }
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') tests.passed++;
        else if (state === 'failed') tests.failed++;
        else if (state === 'skipped') {
          tests.skipped++;
          if (enclosingRequirement(test)?.ran !== false) otherSkipped++;
        }
      }
    }
    const lines = formatSummary({
      suites,
      tests,
      otherSkipped,
      failedFiles,
      unhandledErrors: unhandledErrors.length,
    });
    process.stdout.write(`${lines.join('\n')}\n`);
  }
}
