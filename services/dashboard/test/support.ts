/**
 * Pieces of the dashboard's end-to-end tests: a real SMTP server in the test process (smtp-server,
 * messages parsed by mailparser) and the real `npm start` launcher as a child process.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface ReceivedMail {
  to: string[];
  subject: string;
  text: string;
}

export interface Mailbox {
  url: string;
  received: ReceivedMail[];
  /** The newest link of this kind mailed to `to`; waits for it (bounded). */
  waitForLink(to: string, purpose: 'verify' | 'reset', timeoutMs?: number): Promise<string>;
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

/** `npm start` (scripts/start-embedded.ts) on free ports with `env`; resolves once the banner is out. */
export async function launch(env: Record<string, string>, timeoutMs = 90_000): Promise<Launched> {
  let output = '';
  const child = spawn(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', 'scripts/start-embedded.ts'],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: '0',
        DASHBOARD_PORT: '0',
        REDIS_URL: '',
        KAFKA_BROKERS: '',
        MONGO_URL: '',
        OPENAI_API_KEY: '',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const stop = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const apiUrl = /subx is running at (http:\/\/\S+)/.exec(output)?.[1];
    const dashboardUrl = /dashboard:\s+(http:\/\/\S+)/.exec(output)?.[1];
    if (apiUrl && dashboardUrl) return { child, apiUrl, dashboardUrl, output: () => output, stop };
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await stop();
  throw new Error(`npm start did not come up within ${timeoutMs} ms:\n${output}`);
}
