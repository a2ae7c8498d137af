/**
 * The whole journey in a real browser (Debian's Chromium through playwright-core) against the real
 * `npm start` with a fake YouTube and a real SMTP server in this process: sign up → confirm by the
 * mailed link → sign in → generate a key → call /api/v1/extract with it → regenerate → the old key
 * is 401 → the usage page shows the calls; then the playground, the operators page, and a password
 * reset by the mailed link. The operators page comes after the password step-up (OPERATOR_REAUTH_MS
 * is short here, and the test waits it out). Every page is checked with axe-core (no serious or critical
 * violations), most at 375 px (no horizontal scroll), for CSP violations, and screenshotted to
 * test-artifacts/dashboard/. The launcher's whole output is checked for the passwords and keys.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describeWithBrowser, launchChromium } from '@subx/testing/browser';
import { startFakeYouTube } from '@subx/testing/fake-youtube';
import type { FakeYouTube } from '@subx/testing/fake-youtube';
import { ROOT, launch, startMailbox } from './support.ts';
import type { Launched, Mailbox } from './support.ts';

const EMAIL = 'ada@example.com';
const PASSWORD = 'a long and unguessable passphrase';
const NEW_PASSWORD = 'another long passphrase, after the reset';
const VIDEO_URL = 'https://www.youtube.com/watch?v=F1xioXWb8CY';
const ARTIFACTS = join(ROOT, 'test-artifacts', 'dashboard');
// Page changes wait on scrypt and SMTP: generous bounds for a loaded machine.
const POLL = { timeout: 20_000, interval: 100 };
// Operators enter their password again after this long (10 minutes by default).
const REAUTH_MS = 15_000;
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown }[];
}

describeWithBrowser('dashboard in a real browser', (executablePath) => {
  let youtube: FakeYouTube;
  let mailbox: Mailbox;
  let system: Launched;
  let browser: Browser;
  let context: BrowserContext;
  const cspViolations: string[] = [];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    youtube = await startFakeYouTube();
    mailbox = await startMailbox();
    system = await launch({
      YOUTUBE_BASE_URL: youtube.url,
      ADMIN_TOKEN: 'browser-test-admin-token-0123456789',
      SMTP_URL: mailbox.url,
      OPERATOR_EMAILS: EMAIL,
      OPERATOR_REAUTH_MS: String(REAUTH_MS),
      LOG_LEVEL: 'info',
    });
    browser = await launchChromium(executablePath);
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  });

  afterAll(async () => {
    await browser?.close();
    await system?.stop();
    await mailbox?.close();
    await youtube?.close();
  });

  function watch(page: Page): Page {
    page.on('console', (msg) => {
      if (msg.type() === 'error' && /Content Security Policy/i.test(msg.text()))
        cspViolations.push(msg.text());
    });
    page.on('dialog', (dialog) => void dialog.accept());
    return page;
  }

  /** axe-core in the page (evaluated over CDP, so the page's CSP stays strict), then a screenshot. */
  async function audit(page: Page, name: string): Promise<void> {
    await page.evaluate(AXE_SOURCE);
    const violations = (await page.evaluate(
      'axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)',
    )) as AxeViolation[];
    const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(serious, `${name}: ${JSON.stringify(serious, null, 1)}`).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  }

  /** The page at a 375 px phone width: no horizontal scroll. */
  async function phone(path: string, name: string): Promise<void> {
    const state = await context.storageState();
    const small = await browser.newContext({ viewport: { width: 375, height: 812 }, storageState: state });
    const page = watch(await small.newPage());
    await page.goto(`${system.dashboardUrl}${path}`);
    const overflow = await page.evaluate(
      'document.documentElement.scrollWidth - document.documentElement.clientWidth',
    );
    expect(overflow, `${name} scrolls sideways at 375 px`).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(ARTIFACTS, `${name}-375px.png`), fullPage: true });
    await small.close();
  }

  const extract = (apiKey: string) =>
    fetch(`${system.apiUrl}/api/v1/extract`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify({ url: VIDEO_URL }),
    });

  it('goes from nothing to a working key, a regenerated key and a usage chart', async () => {
    const page = watch(await context.newPage());
    const dash = system.dashboardUrl;

    await page.goto(`${dash}/sign-up`);
    await audit(page, 'sign-up');
    await phone('/sign-up', 'sign-up');
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel(/^Password/).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign up' }).click();
    await expect.poll(() => page.textContent('h1'), POLL).toBe('Check your inbox');

    const link = await mailbox.waitForLink(EMAIL, 'verify');
    expect(link.startsWith(dash)).toBe(true);
    await page.goto(link);
    await audit(page, 'verify');
    await page.getByRole('button', { name: 'Confirm my email' }).click();
    await expect.poll(() => page.textContent('h1'), POLL).toBe('Email confirmed');

    await page.goto(`${dash}/sign-in`);
    await audit(page, 'sign-in');
    await phone('/sign-in', 'sign-in');
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${dash}/keys`);
    const signedInAt = Date.now();
    await audit(page, 'keys-empty');

    await page.getByRole('button', { name: 'Generate API Key' }).click();
    const firstKey = (await page.textContent('#new-key'))!.trim();
    expect(firstKey).toMatch(/^sxk_v1_[A-Za-z0-9]{32}$/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await expect.poll(() => page.textContent('.copied'), POLL).not.toBe('');
    await audit(page, 'keys-new');

    const ok = await extract(firstKey);
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { video_id?: string }).video_id ?? JSON.stringify(ok)).toBeTruthy();

    // Shown once: afterwards only the prefix and the last four characters.
    await page.goto(`${dash}/keys`);
    expect(await page.content()).not.toContain(firstKey);
    expect(await page.textContent('#masked-key')).toBe(`sxk_v1_…${firstKey.slice(-4)}`);
    await audit(page, 'keys');
    await phone('/keys', 'keys');

    await page.getByLabel('I understand the current key stops working at once').check();
    await page.getByRole('button', { name: 'Regenerate Key' }).click();
    const secondKey = (await page.textContent('#new-key'))!.trim();
    expect(secondKey).toMatch(/^sxk_v1_[A-Za-z0-9]{32}$/);
    expect(secondKey).not.toBe(firstKey);
    const old = await extract(firstKey);
    expect(old.status).toBe(401);
    expect(((await old.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
    expect((await extract(secondKey)).status).toBe(200);

    await page.goto(`${dash}/usage`);
    // Two admitted extract calls today (the 401 is not counted).
    expect((await page.textContent('#today-requests'))!.replace(/\s+/g, ' ').trim()).toBe('2 / 100 requests');
    expect(await page.textContent('#tier')).toBe('free');
    const today = new Date().toISOString().slice(0, 10);
    const todayRow = page.locator('tr', { has: page.locator(`th:text-is("${today}")`) });
    // The README's picture (docs/dashboard-usage.png is a copy of this file).
    await page.screenshot({ path: join(ARTIFACTS, 'usage-readme.png') });
    await page.getByText('The numbers as a table').click();
    // The chart reads the usage report, i.e. billing: its request counts trail the gateway by its
    // request-log flush and outbox relay (about 2 s), so reload until they are in (bounded).
    await expect
      .poll(
        async () => {
          const cell = (await todayRow.locator('td').first().textContent())!.trim();
          if (cell !== '2 / 0') {
            await page.goto(`${dash}/usage`);
            await page.getByText('The numbers as a table').click();
          }
          return cell;
        },
        { timeout: 15_000, interval: 500 },
      )
      .toBe('2 / 0');
    expect(await page.locator('svg.chart rect').count()).toBeGreaterThan(0);
    await audit(page, 'usage');
    await phone('/usage', 'usage');

    await page.goto(`${dash}/playground`);
    await page.getByLabel('Video URL').fill(VIDEO_URL);
    await page.getByLabel('Format (extract)').selectOption('srt');
    await page.getByRole('button', { name: 'Run' }).click();
    await expect.poll(() => page.textContent('#result-status'), POLL).toBe('200');
    expect(await page.textContent('#result-body')).toContain('-->');
    const curl = (await page.textContent('#curl'))!;
    expect(curl).toContain('X-API-Key: <API_KEY>');
    expect(curl).not.toContain(secondKey);
    await audit(page, 'playground');
    await phone('/playground', 'playground');

    // The password step-up: past REAUTH_MS since sign-in, /operators asks for the password again.
    await page.waitForTimeout(Math.max(0, signedInAt + REAUTH_MS + 500 - Date.now()));
    await page.goto(`${dash}/operators`);
    await page.waitForURL(`${dash}/reauth?next=%2Foperators`);
    await audit(page, 'reauth');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(`${dash}/operators`);
    expect(await page.textContent('table.accounts')).toContain(EMAIL);
    await audit(page, 'operators');
    await phone('/operators', 'operators');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${dash}/sign-in`);
    await page.goto(`${dash}/forgot`);
    await audit(page, 'forgot');
    await phone('/forgot', 'forgot');

    // Password reset by the mailed one-time link, then sign-in with the new password only.
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByRole('button', { name: 'Email me a reset link' }).click();
    await expect.poll(() => page.textContent('h1'), POLL).toBe('Check your inbox');
    const resetLink = await mailbox.waitForLink(EMAIL, 'reset');
    await page.goto(resetLink);
    await audit(page, 'reset');
    await page.getByLabel(/^New password/).fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Set password' }).click();
    await expect.poll(() => page.textContent('h1'), POLL).toBe('Password changed');
    await page.goto(resetLink);
    await expect.poll(() => page.textContent('h1'), POLL).toBe('Link expired');
    for (const [password, landing] of [
      [PASSWORD, `${dash}/sign-in`],
      [NEW_PASSWORD, `${dash}/keys`],
    ] as const) {
      await page.goto(`${dash}/sign-in`);
      await page.getByLabel('Email').fill(EMAIL);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(landing);
    }

    expect(cspViolations).toEqual([]);
    const output = system.output();
    expect(output).toContain('"msg":"request"');
    for (const secret of [PASSWORD, NEW_PASSWORD, firstKey, secondKey]) expect(output).not.toContain(secret);
  });
});
