/**
 * What a suite needs from the machine (an engine, a browser, a tool) and whether it had it.
 * `describeWithEngine`, `describeWithBrowser` and the helm suite record it on the suite's task meta
 * while the suite is collected, so it reaches the reporters in the main process;
 * `scripts/test-summary-reporter.ts` turns it into the end-of-run summary. This module has no
 * runtime dependency on vitest, so a reporter can import it.
 */
export interface SuiteRequirement {
  kind: 'engine' | 'browser' | 'tool';
  /** redis | kafka | mongo | registry, chromium, helm */
  name: string;
  ran: boolean;
  /** Why it did not run. */
  reason?: string;
  /** The one command that makes it run. */
  enable: string;
  /** Where an engine that ran came from: its environment variable, or `testcontainers <image>`. */
  via?: string;
}

/** The key of the requirement in a suite's task meta. */
export const REQUIREMENT_META_KEY = 'subxRequirement';

/** Starts Redis, Kafka and FerretDB natively and exports their addresses. */
export const ENGINES_UP = 'eval "$(bash scripts/engines.sh up)"';
