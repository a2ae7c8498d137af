/**
 * The whole journey in a real browser (Debian's Chromium through playwright-core) against the real
 * `npm run demo` (its replay of recorded videos as the platform) with a real SMTP server in this
 * process: sign up → confirm by the mailed link → sign in → generate a key → the page's first
 * request (curl, JavaScript, Python) run as shown against the gateway → call /api/v1/extract with
 * it → regenerate → the old key is 401 → the usage page shows the calls; then the playground (its
 * first run as it opens: a video the replay has), the operators page, and a password reset by the
 * mailed link. The operators page comes after the password step-up (OPERATOR_REAUTH_MS is short
 * here, and the test waits it out); there the operator moves the account to Pro, a watch is created
 * with the key through the API, and the Watches page lists it and deletes it. Every page is checked with axe-core (no serious or critical
 * violations), most at 375 px (no horizontal scroll; chart labels at least 10 px, inside their
 * chart and not overlapping), for CSP violations, and screenshotted to test-artifacts/dashboard/.
 * The launcher's whole output is checked for the passwords and keys. A second person makes a named
 * key with one scope, sees it once, uses it, revokes it, and finds both on the Audit log page.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describeWithBrowser, launchChromium } from '@subx/testing/browser';
import { playlistIds } from '@subx/testing/fake-youtube';
import { commandAvailable as hasCommand } from './support.ts';
import { ROOT, launch, signUpInBrowser, startMailbox } from './launcher-support.ts';
import type { Launched, Mailbox } from './launcher-support.ts';

const EMAIL = 'ada@example.com';
const PASSWORD = 'a long and unguessable passphrase';
const NEW_PASSWORD = 'another long passphrase, after the reset';
const VIDEO_URL = 'https://www.youtube.com/watch?v=F1xioXWb8CY';
const PLAYLIST_URL = `https://www.youtube.com/playlist?list=${playlistIds.small}`;
const ARTIFACTS = join(ROOT, 'test-artifacts', 'dashboard');
// Page changes wait on scrypt and SMTP: generous bounds for a loaded machine.
const POLL = { timeout: 20_000, interval: 100 };
// Operators enter their password again after this long (10 minutes by default).
const REAUTH_MS = 15_000;
const run = promisify(execFile);
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown }[];
}

describeWithBrowser('dashboard in a real browser', (executablePath) => {
  let mailbox: Mailbox;
  let system: Launched;
  let browser: Browser;
  let context: BrowserContext;
  const cspViolations: string[] = [];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    mailbox = await startMailbox();
    system = await launch(
      {
        ADMIN_TOKEN: 'browser-test-admin-token-0123456789',
        SMTP_URL: mailbox.url,
        OPERATOR_EMAILS: EMAIL,
        OPERATOR_REAUTH_MS: String(REAUTH_MS),
        LOG_LEVEL: 'info',
      },
      { args: ['--demo'] },
    );
    browser = await launchChromium(executablePath);
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  });

  afterAll(async () => {
    await browser?.close();
    await system?.stop();
    await mailbox?.close();
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

  /** The page at a 375 px phone width (signed in as in `from`): no horizontal scroll. */
  async function phone(path: string, name: string, from: BrowserContext = context): Promise<void> {
    const state = await from.storageState();
    const small = await browser.newContext({ viewport: { width: 375, height: 812 }, storageState: state });
    const page = watch(await small.newPage());
    await page.goto(`${system.dashboardUrl}${path}`);
    const overflow = await page.evaluate(
      'document.documentElement.scrollWidth - document.documentElement.clientWidth',
    );
    expect(overflow, `${name} scrolls sideways at 375 px`).toBeLessThanOrEqual(0);
    expect(await illegibleChartLabels(page), `${name}: chart labels at 375 px`).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, `${name}-375px.png`), fullPage: true });
    await small.close();
  }

  /**
   * Chart labels a person cannot read: under 10 CSS px once the SVG is scaled, reaching outside
   * their chart (clipped), or overlapping another label of the same chart. Empty on pages without charts.
   */
  async function illegibleChartLabels(page: Page): Promise<string[]> {
    return (await page.evaluate(`(() => {
      const problems = [];
      for (const svg of document.querySelectorAll('svg.chart')) {
        const box = svg.getBoundingClientRect();
        const scale = svg.getScreenCTM().a;
        const labels = [...svg.querySelectorAll('text')].map((t) => ({
          text: t.textContent.trim(),
          px: parseFloat(getComputedStyle(t).fontSize) * scale,
          r: t.getBoundingClientRect(),
        }));
        for (const l of labels) {
          if (l.px < 10) problems.push(l.text + ': ' + l.px.toFixed(1) + ' px');
          if (l.r.left < box.left - 0.5 || l.r.right > box.right + 0.5 || l.r.top < box.top - 0.5 || l.r.bottom > box.bottom + 0.5)
            problems.push(l.text + ': outside the chart');
        }
        labels.forEach((a, i) => labels.slice(i + 1).forEach((b) => {
          if (a.r.left < b.r.right && b.r.left < a.r.right && a.r.top < b.r.bottom && b.r.top < a.r.bottom)
            problems.push(a.text + ' overlaps ' + b.text);
        }));
        if (labels.length === 0) problems.push('a chart without labels');
      }
      return problems;
    })()`)) as string[];
  }

  /** Runs the first-request panel's snippets as shown; returns what each printed. */
  async function runFirstRequest(page: Page): Promise<{ name: string; output: string }[]> {
    const text = async (id: string) => (await page.textContent(`#${id}`))!;
    const outputs: { name: string; output: string }[] = [];
    if (await hasCommand('curl')) {
      const { stdout } = await run('sh', ['-c', await text('first-curl')], { timeout: 30_000 });
      outputs.push({ name: 'curl', output: stdout });
    }
    const js = await run(process.execPath, ['--input-type=module', '-e', await text('first-js')], {
      timeout: 30_000,
    });
    outputs.push({ name: 'javascript', output: js.stdout });
    if (await hasCommand('python3')) {
      const { stdout } = await run('python3', ['-c', await text('first-python')], { timeout: 30_000 });
      outputs.push({ name: 'python', output: stdout });
    }
    return outputs;
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
    // Confirming asks for the password the address signed up with (or a new one).
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
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
    // POST-redirect-GET: the key arrives on GET /keys, once.
    await page.waitForURL(`${dash}/keys`);
    const firstKey = (await page.textContent('#new-key'))!.trim();
    expect(firstKey).toMatch(/^sxk_v1_[A-Za-z0-9]{32}$/);
    await page.getByRole('button', { name: 'Copy' }).first().click();
    await expect.poll(() => page.textContent('.copied'), POLL).not.toBe('');
    await audit(page, 'keys-new');
    await page.setViewportSize({ width: 375, height: 812 });
    await page.screenshot({ path: join(ARTIFACTS, 'keys-new-375px.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });

    // The first request, as the page shows it, against the running gateway: a video the replay has.
    expect(await page.getAttribute('#docs-link', 'href')).toBe(`${system.apiUrl}/docs`);
    expect(await page.textContent('#key-tier')).toBe('free');
    expect(await page.textContent('#tier-refused')).toContain('Summaries');
    const firstRuns = await runFirstRequest(page);
    for (const { name, output } of firstRuns) {
      expect(output, name).toContain('F1xioXWb8CY');
      expect(output, name).toMatch(/subtitles|segments|text/);
    }
    const docs = await fetch(String(await page.getAttribute('#docs-link', 'href')));
    expect(docs.status).toBe(200);
    // What the tier panel says: a free key gets 403 TIER_REQUIRED on summarize.
    const summarize = await fetch(`${system.apiUrl}/api/v1/summarize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': firstKey },
      body: JSON.stringify({ url: VIDEO_URL }),
    });
    expect(summarize.status).toBe(403);
    expect(((await summarize.json()) as { error: { code: string } }).error.code).toBe('TIER_REQUIRED');

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
    await page.waitForURL(`${dash}/keys`);
    const secondKey = (await page.textContent('#new-key'))!.trim();
    expect(secondKey).toMatch(/^sxk_v1_[A-Za-z0-9]{32}$/);
    expect(secondKey).not.toBe(firstKey);
    const old = await extract(firstKey);
    expect(old.status).toBe(401);
    expect(((await old.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
    expect((await extract(secondKey)).status).toBe(200);

    await page.goto(`${dash}/usage`);
    // The first request's runs and two extract calls today (the 401 and the 403 are not counted).
    const calls = firstRuns.length + 2;
    expect((await page.textContent('#today-requests'))!.replace(/\s+/g, ' ').trim()).toBe(
      `${calls} / 100 requests`,
    );
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
          if (cell !== `${calls} / 0`) {
            await page.goto(`${dash}/usage`);
            await page.getByText('The numbers as a table').click();
          }
          return cell;
        },
        { timeout: 15_000, interval: 500 },
      )
      .toBe(`${calls} / 0`);
    expect(await page.locator('svg.chart rect').count()).toBeGreaterThan(0);
    await audit(page, 'usage');
    await phone('/usage', 'usage');

    // The playground's first run, as it opens in the demo: a video the replay has, the others offered.
    await page.goto(`${dash}/playground`);
    expect(await page.inputValue('#url')).toBe(VIDEO_URL);
    expect(await page.locator('#demo-videos option').count()).toBeGreaterThan(3);
    await page.getByRole('button', { name: 'Run' }).click();
    await expect.poll(() => page.textContent('#result-status'), POLL).toBe('200');
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

    // Watches are Pro and up: the operator moves the account there, the key creates a watch through
    // the API, and the Watches page lists it, then deletes it.
    const own = page.locator('table.accounts tr', { hasText: EMAIL });
    await own.getByLabel('Tier').selectOption('pro');
    await own.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.textContent('p.notice'), POLL).toContain('Saved');
    const created = await fetch(`${system.apiUrl}/api/v1/watches`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': secondKey },
      body: JSON.stringify({ source: { type: 'playlist', url: PLAYLIST_URL }, interval_minutes: 60 }),
    });
    const body = (await created.json()) as { watch_id: string };
    expect(created.status, JSON.stringify(body)).toBe(201);
    await page.goto(`${dash}/watches`);
    const row = page.locator('#watches tr', { hasText: body.watch_id });
    expect(await row.count()).toBe(1);
    expect(await row.textContent()).toContain(PLAYLIST_URL);
    expect(await row.textContent()).toContain('every hour');
    await audit(page, 'watches');
    await phone('/watches', 'watches');
    await row.getByLabel('Stop this watch').check();
    await row.getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => page.textContent('p.notice'), POLL).toContain(`Deleted watch ${body.watch_id}`);
    expect(await page.locator('#no-watches').count()).toBe(1);
    const gone = await fetch(`${system.apiUrl}/api/v1/watches/${body.watch_id}`, {
      headers: { 'x-api-key': secondKey },
    });
    expect(gone.status).toBe(404);

    // What whoever held the password could have set going with the key: a watch, and the webhook
    // secret read through the API. The reset below pauses the one and replaces the other at once.
    const left = await fetch(`${system.apiUrl}/api/v1/watches`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': secondKey },
      body: JSON.stringify({ source: { type: 'playlist', url: PLAYLIST_URL }, interval_minutes: 60 }),
    });
    const leftWatch = (await left.json()) as { watch_id: string };
    expect(left.status, JSON.stringify(leftWatch)).toBe(201);
    const secretRead = await fetch(`${system.apiUrl}/api/v1/webhooks/secret`, {
      headers: { 'x-api-key': secondKey },
    });
    const oldSecret = ((await secretRead.json()) as { secret: string }).secret;
    expect(oldSecret).toMatch(/^whsec_/);

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
    expect(await page.textContent('#secured')).toContain(leftWatch.watch_id);
    await audit(page, 'password-changed');
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

    // After the reset: the webhook secret differs and the old one is listed nowhere; the watch the
    // old key made is paused until its owner resumes it.
    await page.goto(`${dash}/webhooks`);
    const newSecret = (await page.textContent('#webhook-secret'))!.trim();
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(oldSecret);
    expect(await page.content()).not.toContain(oldSecret);
    expect(await page.locator('#previous-secret').count()).toBe(0);
    await page.goto(`${dash}/watches`);
    const paused = page.locator('#watches tr', { hasText: leftWatch.watch_id });
    expect(await paused.textContent()).toContain('paused');
    await audit(page, 'watches-paused');
    await paused.getByRole('button', { name: 'Resume' }).click();
    await expect
      .poll(() => page.textContent('p.notice'), POLL)
      .toContain(`Resumed watch ${leftWatch.watch_id}`);
    expect(await page.locator('#paused-watches').count()).toBe(0);

    expect(cspViolations).toEqual([]);
    const output = system.output();
    expect(output).toContain('"msg":"request"');
    for (const secret of [PASSWORD, NEW_PASSWORD, firstKey, secondKey]) expect(output).not.toContain(secret);
  });

  it('makes a named key with one scope, shows it once, revokes it; the audit log has both', async () => {
    const email = 'grace@example.com';
    const own = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = watch(await own.newPage());
    const dash = system.dashboardUrl;
    await signUpInBrowser(page, { dashboardUrl: dash, mailbox, email, password: PASSWORD });

    // A key that may only read transcripts, shown once after the redirect.
    await page.getByRole('textbox', { name: /^Name/ }).fill('Transcripts only');
    await page.getByRole('checkbox', { name: /^transcripts:read/ }).check();
    await page.getByRole('button', { name: 'Make key' }).click();
    await page.waitForURL(`${dash}/keys`);
    const namedKey = (await page.textContent('#new-named-key'))!.trim();
    expect(namedKey).toMatch(/^sxk_v1_[A-Za-z0-9]{32}$/);
    await audit(page, 'keys-named-new');
    expect((await extract(namedKey)).status).toBe(200);
    // Its one scope is all it may use: listing the account's keys needs keys:admin.
    const keysCall = await fetch(`${system.apiUrl}/api/v1/keys`, { headers: { 'x-api-key': namedKey } });
    expect(keysCall.status).toBe(403);
    expect(((await keysCall.json()) as { error: { code: string } }).error.code).toBe('INSUFFICIENT_SCOPE');

    await page.goto(`${dash}/keys`);
    expect(await page.content()).not.toContain(namedKey);
    const row = page.locator('#named-keys tr', { hasText: 'Transcripts only' });
    expect(await row.count()).toBe(1);
    const keyId = (await row.getAttribute('data-key-id'))!;
    expect(keyId).toMatch(/^key_/);
    expect(await row.textContent()).toContain('transcripts:read');
    expect(await row.locator('td.status-active').count()).toBe(1);
    await audit(page, 'keys-named');
    await phone('/keys', 'keys-named', own);

    await row.getByLabel('Refuse requests with “Transcripts only” from now on').check();
    await row.getByRole('button', { name: 'Revoke' }).click();
    await expect.poll(() => page.textContent('p.notice'), POLL).toContain('“Transcripts only” is revoked');
    expect(await row.locator('td.status-revoked').textContent()).toBe('revoked');
    expect((await extract(namedKey)).status).toBe(401);

    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.waitForURL(`${dash}/audit`);
    for (const action of ['key.created', 'key.revoked']) {
      const event = page.locator(`#audit-events tr[data-action="${action}"]`, { hasText: keyId });
      expect(await event.count(), action).toBe(1);
      expect(await event.textContent(), action).toContain(email);
    }
    await audit(page, 'audit');
    await phone('/audit', 'audit', own);
    await own.close();

    expect(cspViolations).toEqual([]);
    expect(system.output()).not.toContain(namedKey);
  });
});
