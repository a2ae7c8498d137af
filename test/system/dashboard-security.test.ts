/**
 * The dashboard's security from outside, on the real `npm start` (scripts/start-embedded.ts) over real sockets:
 * an unconfirmed sign-up for an address in OPERATOR_EMAILS gets no operator page, a concurrent
 * burst of 40 wrong passwords for one address gets at most 5 answers of 401 (the rest 429 with
 * Retry-After), and under NODE_ENV=production `npm start` still prints the mailed link to its
 * console while the dashboard on its own (services/dashboard/src/main.ts) refuses to start
 * without SMTP_URL.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNpmStart, type NpmStartProcess } from './npm-start-process.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OPERATOR = 'ops@example.com';
const PASSWORD = 'operator squatter passphrase';

/** A cookie-keeping form client over fetch (manual redirects, CSRF read from the last form). */
class FormClient {
  private cookies = new Map<string, string>();
  private html = '';
  private readonly base: string;
  constructor(base: string) {
    this.base = base;
  }

  private async send(path: string, init: RequestInit = {}) {
    const res = await fetch(`${this.base}${path}`, {
      ...init,
      redirect: 'manual',
      headers: {
        ...(init.headers as Record<string, string>),
        cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      },
      signal: AbortSignal.timeout(30_000),
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    this.html = await res.text();
    return res;
  }

  get(path: string) {
    return this.send(path);
  }

  csrf(): string {
    const match = /name="_csrf" value="([^"]+)"/.exec(this.html);
    if (!match) throw new Error('no CSRF token on the last page');
    return match[1]!;
  }

  post(path: string, form: Record<string, string>, csrf = this.csrf()) {
    return this.send(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, ...form }).toString(),
    });
  }
}

describe('dashboard security on npm start', () => {
  let system: NpmStartProcess;
  let dashboard = '';

  beforeAll(async () => {
    // NODE_ENV=production: npm start is still not a deployment, and keeps printing the links.
    system = await startNpmStart({ OPERATOR_EMAILS: OPERATOR, SMTP_URL: '', NODE_ENV: 'production' });
    dashboard = /dashboard:\s+(http:\/\/\S+)/.exec(system.output())![1]!;
  }, 90_000);

  afterAll(async () => {
    await system?.stop();
  });

  it('gives an unconfirmed sign-up for an operator address no operator page', async () => {
    const squatter = new FormClient(dashboard);
    await squatter.get('/sign-up');
    expect((await squatter.post('/sign-up', { email: OPERATOR, password: PASSWORD })).status).toBe(200);
    await squatter.get('/sign-in');
    const signIn = await squatter.post('/sign-in', { email: OPERATOR, password: PASSWORD });
    expect(signIn.status).toBe(303);
    expect(signIn.headers.get('location')).toBe('/keys');
    const operators = await squatter.get('/operators');
    expect(operators.status).toBe(403);
    // The confirmation link went to the console (no SMTP), not to the squatter.
    expect(system.output()).toMatch(new RegExp(`mail to ${OPERATOR}[\\s\\S]*?/verify\\?token=`));
  });

  it('answers a concurrent burst of 40 wrong passwords for one address with at most 5 × 401, the rest 429 + Retry-After', async () => {
    const victim = new FormClient(dashboard);
    await victim.get('/sign-up');
    await victim.post('/sign-up', { email: 'victim@example.com', password: 'the victim passphrase' });
    const attacker = new FormClient(dashboard);
    await attacker.get('/sign-in');
    const csrf = attacker.csrf();
    const answers = await Promise.all(
      Array.from({ length: 40 }, () =>
        attacker.post('/sign-in', { email: 'victim@example.com', password: 'a wrong guess!' }, csrf),
      ),
    );
    const statuses = answers.map((r) => r.status);
    const unauthorized = statuses.filter((s) => s === 401).length;
    expect(unauthorized).toBeLessThanOrEqual(5);
    expect(unauthorized).toBeGreaterThan(0);
    const limited = answers.filter((r) => r.status === 429);
    expect(limited.length).toBe(40 - unauthorized);
    for (const r of limited) expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });
});

describe('the dashboard alone under NODE_ENV=production', () => {
  it('refuses to start without SMTP_URL, naming MAIL_TO_LOG', async () => {
    const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', 'src/main.ts'], {
      cwd: `${ROOT}services/dashboard`,
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'production',
        ADMIN_TOKEN: 'system-test-admin-token-0123456789',
        DASHBOARD_PORT: '0',
        METRICS_PORT: 'off',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((resolve, reject) => {
      const bound = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`still running after 30 s:\n${output}`));
      }, 30_000);
      child.on('exit', (c) => {
        clearTimeout(bound);
        resolve(c);
      });
    });
    expect(code).toBe(1);
    expect(output).toMatch(/dashboard: .*SMTP_URL: is required .*MAIL_TO_LOG=true/s);
    expect(output).not.toMatch(/listening/);
  });
});
