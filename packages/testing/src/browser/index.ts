import { existsSync } from 'node:fs';
import { describe, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { recordRequirement } from '../engines.ts';

/**
 * A real browser for tests: Debian's Chromium (`bash scripts/install-browser.sh`, which `.ci/run`
 * runs) driven by playwright-core. playwright-core downloads no browser of its own, so the binary
 * must be on the machine: CHROMIUM_PATH, else the usual Debian/Ubuntu locations.
 */

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** The Chromium executable, or null when none is installed. */
export function chromiumPath(): string | null {
  const fromEnv = process.env.CHROMIUM_PATH?.trim();
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : null;
  return CANDIDATES.find((p) => existsSync(p)) ?? null;
}

/** Headless Chromium; the caller closes it. */
export async function launchChromium(executablePath: string): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath,
    headless: true,
    // root in CI containers: Chromium's sandbox needs user namespaces it may not get there
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
    timeout: 60_000,
  });
}

/**
 * `describe` with a Chromium executable. Without one: under CI a failing test (a browser test must
 * never pass silently), elsewhere a skipped suite with a loud notice naming the install command.
 */
export function describeWithBrowser(name: string, fn: (executablePath: string) => void): void {
  const path = chromiumPath();
  const requirement = {
    kind: 'browser',
    name: 'chromium',
    enable: 'bash scripts/install-browser.sh',
  } as const;
  if (path) {
    describe(name, () => {
      recordRequirement({ ...requirement, ran: true });
      fn(path);
    });
    return;
  }
  const reason =
    'no Chromium found: run `bash scripts/install-browser.sh` (Debian: apt-get install chromium) or set CHROMIUM_PATH';
  if (process.env.CI) {
    describe(name, () => {
      recordRequirement({ ...requirement, ran: false, reason: 'no Chromium found (or CHROMIUM_PATH)' });
      it('a browser is available', () => {
        throw new Error(`browser suite in CI without a browser: ${reason}`);
      });
    });
    return;
  }
  console.warn(`\n*** SKIPPING browser suite "${name}": ${reason} ***\n`);
  describe.skip(`${name} (no browser)`, () => {
    recordRequirement({ ...requirement, ran: false, reason: 'no Chromium found (or CHROMIUM_PATH)' });
    fn('unavailable');
  });
}
