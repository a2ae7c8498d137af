/**
 * Pieces of the dashboard's end-to-end tests: a real SMTP server in the test process (smtp-server,
 * messages parsed by mailparser) and the real `npm start` launcher as a child process.
 */
import type { ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { expect } from 'vitest';
import type { Page } from 'playwright-core';
import { EMBEDDED_ENV, spawnLauncher } from '@subx/embedded/launcher';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

interface ReceivedMail {
  to: string[];
  subject: string;
  text: string;
}

export interface Mailbox {
  url: string;
  received: ReceivedMail[];
  /** The newest link of this kind mailed to `to`; waits for it (bounded). */
  waitForLink(
    to: string,
    purpose: 'verify' | 'reset' | 'invitation' | 'delete-workspace',
    timeoutMs?: number,
  ): Promise<string>;
  close(): Promise<void>;
}

export async function startMailbox(): Promise<Mailbox> {
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    // Plain SMTP on loopback: without STARTTLS nodemailer sends in the clear instead of
    // failing on the server's self-signed certificate.
    disabledCommands: ['STARTTLS'],
    size: 1024 * 1024,
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((mail) => {
          received.push({
            to: session.envelope.rcptTo.map((r) => r.address),
            subject: mail.subject ?? '',
            text: mail.text ?? '',
          });
          callback();
        })
        .catch((err: Error) => callback(err));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    async waitForLink(to, purpose, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      const pattern = new RegExp(`https?://\\S+/${purpose}\\?token=[A-Za-z0-9_-]+`);
      while (Date.now() < deadline) {
        for (const mail of [...received].reverse()) {
          const match = mail.to.includes(to) ? pattern.exec(mail.text) : null;
          if (match) return match[0];
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`no ${purpose} mail to ${to} within ${timeoutMs} ms`);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface Launched {
  child: ChildProcess;
  apiUrl: string;
  dashboardUrl: string;
  /** Everything the process wrote to stdout and stderr. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * `npm start` (services/embedded, spawned by its launcher; `args` ['--demo'] for `npm run demo`) on
 * free ports with `env`; resolves once the banner is out.
 */
export async function launch(
  env: Record<string, string>,
  options: { args?: string[]; timeoutMs?: number } = {},
): Promise<Launched> {
  const timeoutMs = options.timeoutMs ?? 90_000;
  const launcher = spawnLauncher(options.args ?? [], { ...EMBEDDED_ENV, ...env });
  try {
    const apiUrl = (await launcher.waitFor(/subx is running at (http:\/\/\S+)/, timeoutMs))[1]!;
    const dashboardUrl = (await launcher.waitFor(/dashboard:\s+(http:\/\/\S+)/, timeoutMs))[1]!;
    return { child: launcher.child, apiUrl, dashboardUrl, output: launcher.output, stop: launcher.stop };
  } catch (err) {
    await launcher.stop();
    throw err;
  }
}

/** Page changes wait on scrypt and SMTP: generous bounds for a loaded machine. */
export const BROWSER_POLL = { timeout: 20_000, interval: 100 };

/**
 * A new person in the browser: signs up, confirms the address by the mailed link, signs in, and is
 * on the keys page.
 */
export async function signUpInBrowser(
  page: Page,
  o: { dashboardUrl: string; mailbox: Mailbox; email: string; password: string },
): Promise<void> {
  await page.goto(`${o.dashboardUrl}/sign-up`);
  await page.getByLabel('Email').fill(o.email);
  await page.getByLabel(/^Password/).fill(o.password);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await expect.poll(() => page.textContent('h1'), BROWSER_POLL).toBe('Check your inbox');
  await page.goto(await o.mailbox.waitForLink(o.email, 'verify'));
  await page.getByLabel('Password', { exact: true }).fill(o.password);
  await page.getByRole('button', { name: 'Confirm my email' }).click();
  await expect.poll(() => page.textContent('h1'), BROWSER_POLL).toBe('Email confirmed');
  await page.goto(`${o.dashboardUrl}/sign-in`);
  await page.getByLabel('Email').fill(o.email);
  await page.getByLabel('Password').fill(o.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${o.dashboardUrl}/keys`);
}
