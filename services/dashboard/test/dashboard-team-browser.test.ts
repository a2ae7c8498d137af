/**
 * A team in a real browser (Chromium) against the real system (`npm run demo` with a real SMTP
 * server): the owner invites a developer by e-mail; the developer joins by the link with a password
 * of their own, makes a `transcripts:read` key that extracts but is refused jobs and the webhook
 * secret; pages beyond the role are refused; the owner's audit log shows the invitation, the key
 * and the refusals; the export lists both members and the workspace's job; removing the developer
 * ends their session and revokes their key; the owner deletes the workspace (confirmed from the
 * mailbox), after which its keys are 401 and its job and results are gone.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { describeWithBrowser, launchChromium } from '@subx/testing/browser';
import { BROWSER_POLL as POLL, launch, signUpInBrowser, startMailbox } from './launcher-support.ts';
import type { Launched, Mailbox } from './launcher-support.ts';

const OWNER = 'olivia@example.com';
const DEVELOPER = 'devon@example.com';
const PASSWORD = 'a long and unguessable passphrase';
const DEV_PASSWORD = 'the developer chose this one';
const VIDEO_URL = 'https://www.youtube.com/watch?v=F1xioXWb8CY';
const ADMIN_TOKEN = 'team-browser-test-admin-token-0123456';

describeWithBrowser('a team in a real browser', (executablePath) => {
  let mailbox: Mailbox;
  let system: Launched;
  let browser: Browser;

  beforeAll(async () => {
    mailbox = await startMailbox();
    system = await launch({ ADMIN_TOKEN, SMTP_URL: mailbox.url, LOG_LEVEL: 'info' }, { args: ['--demo'] });
    browser = await launchChromium(executablePath);
  });

  afterAll(async () => {
    await browser?.close();
    await system?.stop();
    await mailbox?.close();
  });

  const api = (path: string, key: string, init: RequestInit = {}) =>
    fetch(`${system.apiUrl}${path}`, {
      ...init,
      headers: { 'content-type': 'application/json', 'x-api-key': key, ...init.headers },
    });
  const codeOf = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code;

  type ExportLine = { type: string; email?: string; job_id?: string; id?: string; account_id?: string };
  async function exportLines(key: string): Promise<ExportLine[]> {
    const exported = await api('/api/v1/account/export', key);
    expect(exported.status).toBe(200);
    return (await exported.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as ExportLine);
  }
  const adminCall = (path: string, init: RequestInit = {}) =>
    fetch(`${/admin API: (http:\/\/\S+)/.exec(system.output())![1]!}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    });

  /** The finished job (bounded wait). */
  async function finishedJob(jobId: string, key: string): Promise<{ status: string }> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const job = (await (await api(`/api/v1/jobs/${jobId}`, key)).json()) as { status: string };
      if (job.status !== 'queued' && job.status !== 'running') return job;
      if (Date.now() > deadline) throw new Error(`job ${jobId} still ${job.status}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it('invites a developer whose scoped key works as far as its scope, removes them, deletes the workspace', async () => {
    const dash = system.dashboardUrl;
    const ownerContext = await browser.newContext();
    const owner = await ownerContext.newPage();
    await signUpInBrowser(owner, {
      dashboardUrl: dash,
      mailbox,
      email: OWNER,
      password: PASSWORD,
    });
    await owner.getByRole('button', { name: 'Generate API Key' }).click();
    await owner.waitForURL(`${dash}/keys`);
    const primaryKey = (await owner.textContent('#new-key'))!.trim();

    // The owner invites a developer from the members page.
    await owner.getByRole('link', { name: 'Members' }).click();
    await owner.waitForURL(`${dash}/members`);
    expect(await owner.textContent('#my-role')).toBe('owner');
    const invite = owner.locator('#invite-form');
    await invite.getByLabel('E-mail').fill(DEVELOPER);
    await invite.getByLabel('Role').selectOption('developer');
    await owner.getByRole('button', { name: 'Send invitation' }).click();
    await expect.poll(() => owner.textContent('p.notice'), POLL).toContain(`Invitation sent to ${DEVELOPER}`);
    expect(await owner.locator(`#invitations tr[data-invitation="${DEVELOPER}"]`).count()).toBe(1);

    // The developer joins by the link, choosing a password: no separate sign-up.
    const devContext = await browser.newContext();
    const developer = await devContext.newPage();
    const link = await mailbox.waitForLink(DEVELOPER, 'invitation');
    expect(link.startsWith(dash)).toBe(true);
    await developer.goto(link);
    expect(await developer.textContent('main')).toMatch(/invited to a subx workspace as\s+developer:/);
    await developer.getByLabel('Choose a password').fill(DEV_PASSWORD);
    await developer.getByRole('button', { name: 'Join the workspace' }).click();
    await developer.waitForURL(`${dash}/keys`);
    // What the role may not open is not offered, and refused when asked for.
    const nav = (await developer.textContent('nav'))!;
    expect(nav).toContain('Jobs');
    expect(nav).not.toContain('Webhooks');
    expect(nav).not.toContain('Audit log');
    const webhooks = await developer.goto(`${dash}/webhooks`);
    expect(webhooks!.status()).toBe(403);
    expect(await developer.textContent('main')).toContain('Your role in this workspace (developer)');

    // The developer's key may read transcripts, and nothing else.
    await developer.goto(`${dash}/keys`);
    await developer.getByRole('textbox', { name: /^Name/ }).fill('Reader');
    await developer.getByRole('checkbox', { name: /^transcripts:read/ }).check();
    await developer.getByRole('button', { name: 'Make key' }).click();
    await developer.waitForURL(`${dash}/keys`);
    const devKey = (await developer.textContent('#new-named-key'))!.trim();
    const extract = () =>
      api('/api/v1/extract', devKey, { method: 'POST', body: JSON.stringify({ url: VIDEO_URL }) });
    expect((await extract()).status).toBe(200);
    const jobs = await api('/api/v1/jobs', devKey, {
      method: 'POST',
      body: JSON.stringify({ source: { type: 'urls', urls: [VIDEO_URL] } }),
    });
    expect(jobs.status).toBe(403);
    expect(await codeOf(jobs)).toBe('INSUFFICIENT_SCOPE');
    const secret = await api('/api/v1/webhooks/secret', devKey);
    expect(secret.status).toBe(403);
    expect(await codeOf(secret)).toBe('INSUFFICIENT_SCOPE');

    // A key past its expiry is refused as unauthorized.
    const shortLived = await api('/api/v1/keys', primaryKey, {
      method: 'POST',
      body: JSON.stringify({
        name: 'Short-lived',
        scopes: ['transcripts:read'],
        expires_at: new Date(Date.now() + 2_000).toISOString(),
      }),
    });
    expect(shortLived.status).toBe(201);
    const expiring = ((await shortLived.json()) as { api_key: string }).api_key;
    await new Promise((r) => setTimeout(r, 2_500));
    const expired = await api('/api/v1/extract', expiring, {
      method: 'POST',
      body: JSON.stringify({ url: VIDEO_URL }),
    });
    expect(expired.status).toBe(401);

    // The owner's audit log: the invitation, the joining, the key, the refusals.
    await owner.goto(`${dash}/audit`);
    for (const action of ['member.invited', 'member.added', 'key.created', 'scope.refused']) {
      expect(
        await owner.locator(`#audit-events tr[data-action="${action}"]`).count(),
        action,
      ).toBeGreaterThan(0);
    }
    const made = owner.locator('#audit-events tr[data-action="key.created"]', { hasText: DEVELOPER });
    expect(await made.count()).toBe(1);

    // A job of the workspace (jobs are Pro's: an operator upgrades it), run to its end.
    const accountId = (await exportLines(primaryKey))[0]!.account_id!;
    const upgraded = await adminCall(`/admin/v1/accounts/${accountId}`, {
      method: 'PATCH',
      body: JSON.stringify({ tier: 'pro' }),
    });
    expect(upgraded.status).toBe(200);
    const queued = await api('/api/v1/jobs', primaryKey, {
      method: 'POST',
      body: JSON.stringify({ source: { type: 'urls', urls: [VIDEO_URL] } }),
    });
    expect(queued.status).toBe(202);
    const jobId = ((await queued.json()) as { job_id: string }).job_id;
    expect((await finishedJob(jobId, primaryKey)).status).toBe('completed');

    // The workspace's export lists both members, the job and its result.
    const lines = await exportLines(primaryKey);
    expect(lines.filter((l) => l.type === 'member').map((l) => l.email)).toEqual([OWNER, DEVELOPER]);
    expect(lines.filter((l) => l.type === 'job').map((l) => l.job_id ?? l.id)).toEqual([jobId]);
    expect(lines.filter((l) => l.type === 'job_result' && l.job_id === jobId)).toHaveLength(1);

    // Removed: the developer's session ends and their key stops working at once.
    await owner.goto(`${dash}/members`);
    const row = owner.locator(`#members tr[data-member="${DEVELOPER}"]`);
    await row.getByLabel('I am sure').check();
    await row.getByRole('button', { name: 'Remove' }).click();
    await expect.poll(() => owner.textContent('p.notice'), POLL).toContain('1 key(s) they made are revoked');
    expect((await extract()).status).toBe(401);
    await developer.goto(`${dash}/keys`);
    await developer.waitForURL(`${dash}/sign-in`);

    // The owner deletes the workspace, confirmed by the link mailed to them.
    owner.on('dialog', (dialog) => void dialog.accept());
    await owner.goto(`${dash}/keys`);
    await owner.getByLabel('I understand the workspace and everything it holds are deleted for good').check();
    await owner.getByRole('button', { name: 'Delete workspace' }).click();
    await expect.poll(() => owner.textContent('main'), POLL).toContain('We sent a link');
    const deletion = await mailbox.waitForLink(OWNER, 'delete-workspace');
    await owner.goto(deletion);
    await owner.getByRole('button', { name: 'Delete the workspace now' }).click();
    await expect.poll(() => owner.textContent('h1'), POLL).toBe('Workspace deleted');
    const afterDeletion = await api('/api/v1/extract', primaryKey, {
      method: 'POST',
      body: JSON.stringify({ url: VIDEO_URL }),
    });
    expect(afterDeletion.status).toBe(401);
    expect((await api(`/api/v1/jobs/${jobId}`, primaryKey)).status).toBe(401);
    expect((await adminCall(`/admin/v1/accounts/${accountId}`)).status).toBe(404);
    expect((await adminCall(`/admin/v1/accounts/${accountId}/jobs`)).status).toBe(404);

    await ownerContext.close();
    await devContext.close();
    const output = system.output();
    for (const secretValue of [
      PASSWORD,
      DEV_PASSWORD,
      devKey,
      primaryKey,
      new URL(link).searchParams.get('token')!,
      new URL(deletion).searchParams.get('token')!,
    ]) {
      expect(output).not.toContain(secretValue);
    }
  });
});
