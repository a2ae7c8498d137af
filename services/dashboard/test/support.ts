/**
 * Test wiring (used by *.test.ts only): the dashboard app on in-memory stores with a gateway
 * client backed by an in-memory account table (our own GatewayClient interface), a mailbox mailer,
 * and a cookie-keeping client over `app.inject`.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { ManualClock, createInMemoryDocumentStore, createInMemoryKeyValueStore } from '@subx/ports';
import type { DocumentStore, KeyValueStore } from '@subx/ports';
import { createLogger } from '@subx/service-kit';
import { buildDashboardApp } from '../src/app.ts';
import {
  CSRF_COOKIE,
  SECURE_CSRF_COOKIE,
  SECURE_SESSION_COOKIE,
  SESSION_COOKIE,
} from '../src/auth/cookies.ts';
import { loadDashboardConfig } from '../src/config.ts';
import type {
  AccountUsage,
  CallResult,
  GatewayAccount,
  GatewayClient,
  JobSummary,
  WatchSummary,
  WebhookSecret,
} from '../src/gateway/client.ts';
import { GatewayError } from '../src/gateway/client.ts';
import type { RecordAuditBody } from '@subx/contracts/audit';
import type { Mail, Mailer } from '../src/mail/mailer.ts';
import { fakeNamedKeys } from './named-keys-support.ts';
import { fakeMembers } from './members-support.ts';
import { fakeRetention } from './retention-support.ts';
import type { SampleVideo } from '../src/views/first-request.ts';

export const TEST_ADMIN_TOKEN = 'dashboard-test-admin-token-0123';

/**
 * The scrypt cost N the test dashboards hash with, unless a test sets PASSWORD_SCRYPT_N itself.
 * Production's (config.ts: 2^15, at least 2^14 from the environment) costs about 32 MiB and a
 * noticeable share of a CPU per hash, and the journeys hash dozens of times; the tests check what
 * the app does with a hash, not scrypt's strength (`auth/passwords.test.ts` hashes at production
 * cost, `config.test.ts` holds the default). Set on the parsed config, so the environment still
 * cannot ask for less than the schema allows.
 */
const TEST_SCRYPT_N = 1_024;

export function fakeGateway() {
  const accounts = new Map<string, GatewayAccount>();
  const calls: { id: string; request: unknown }[] = [];
  /** The request id of every call, in order (the dashboard passes its request's id on). */
  const requestIds: string[] = [];
  const keys = new Map<string, string>();
  /** Webhook signing secrets per account, as the gateway keeps them (current and previous). */
  const secrets = new Map<string, { current: WebhookSecret; previous: string | null }>();
  /** Jobs per account, newest first (tests fill it); pages by a cursor that is the next index. */
  const jobs = new Map<string, JobSummary[]>();
  const jobPages: { id: string; limit: number; cursor?: string }[] = [];
  /** Watches per account, newest first (tests fill it); deleteWatch removes from it. */
  const watches = new Map<string, WatchSummary[]>();
  /** What the dashboard reported to the audit log; `auditAnswer` says how the next reports go. */
  const auditReports: { id: string; event: RecordAuditBody }[] = [];
  const audit = { answer: 'ok' as 'ok' | 'fail' | 'hang' };
  /** The workspaces deleted and exported, with the member who asked. */
  const deletions: { id: string; memberId: string }[] = [];
  const exported: { id: string; memberId: string }[] = [];
  const newSecret = (): WebhookSecret => ({
    secret: `whsec_${randomBytes(32).toString('base64')}`,
    created_at: new Date().toISOString(),
    previous_secret_expires_at: null,
  });
  const get = (id: string) => {
    const a = accounts.get(id);
    if (!a) throw new GatewayError(404, 'NOT_FOUND');
    return a;
  };
  const named = fakeNamedKeys(get);
  const people = fakeMembers(get, named);
  const retention = fakeRetention(get);
  const newKey = (id: string) => {
    const key = `sxk_v1_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'a').slice(0, 32)}`;
    keys.set(id, key);
    const a = get(id);
    a.key = {
      prefix: 'sxk_v1_',
      last4: key.slice(-4),
      created_at: new Date().toISOString(),
      status: 'active',
    };
    return key;
  };
  const client: GatewayClient = {
    forRequest(requestId) {
      // Every method of the same table, each call recording the id it was made under.
      return Object.fromEntries(
        Object.entries(client).map(([name, method]) => [
          name,
          name === 'forRequest'
            ? method
            : (...args: unknown[]) => {
                requestIds.push(requestId);
                return (method as (...a: unknown[]) => unknown)(...args);
              },
        ]),
      ) as unknown as GatewayClient;
    },
    async createAccount(email) {
      const id = `acct_${randomBytes(16).toString('hex')}`;
      accounts.set(id, {
        account_id: id,
        tier: 'free',
        credits: 50,
        email,
        created_at: new Date().toISOString(),
        key: { prefix: 'sxk_v1_', last4: 'xxxx', created_at: '', status: 'active' },
        usage: { today_requests: 0, month_credits: 0 },
      });
      newKey(id);
      return { account_id: id };
    },
    getAccount: async (id) => structuredClone(get(id)),
    async updateAccount(id, change) {
      const a = get(id);
      if (change.tier) a.tier = change.tier;
      if (change.add_credits) a.credits += change.add_credits;
      return structuredClone(a);
    },
    issueKey: async (id) => newKey(id),
    async revokeKey(id) {
      get(id).key.status = 'revoked';
      keys.delete(id);
    },
    async secureAccount(id, key) {
      const a = get(id);
      // As the gateway: every watch here counts as made by the key being replaced.
      const paused = (watches.get(id) ?? []).filter((w) => !w.paused);
      for (const w of paused) w.paused = { at: new Date().toISOString(), reason: 'key_compromised' };
      let apiKey: string | null = null;
      if (a.key.status === 'active') {
        if (key === 'replace') apiKey = newKey(id);
        else await client.revokeKey(id);
      }
      secrets.set(id, { current: newSecret(), previous: null });
      return {
        api_key: apiKey,
        webhook_secret_rotated: true,
        paused_watches: paused.map((w) => w.watch_id),
        canceled_jobs: [],
        // As the gateway: every active named key revoked.
        revoked_keys: named.revokeAll(id),
      };
    },
    async limits(id) {
      const a = get(id);
      return {
        account_id: id,
        tier: a.tier,
        daily: {
          limit: 100,
          used: a.usage.today_requests,
          remaining: 100 - a.usage.today_requests,
          reset_at: '2026-03-16T00:00:00.000Z',
        },
        credits: { balance: a.credits, monthly_allowance: 50 },
        // The gateway's default table: summarize, comments and jobs need pro.
        operations: Object.fromEntries(
          (
            [
              'extract',
              'batch',
              'playlist',
              'summarize',
              'comments',
              'comments_analyze',
              'jobs',
              'search',
            ] as const
          ).map((op) => {
            const minimum = ['extract', 'batch', 'playlist'].includes(op) ? 'free' : 'pro';
            return [op, { minimum_tier: minimum, allowed: a.tier !== 'free' || minimum === 'free' }];
          }),
        ),
      };
    },
    async usage(id, from, to): Promise<AccountUsage> {
      get(id);
      const days = [];
      for (let t = Date.parse(from); t <= Date.parse(to); t += 86_400_000) {
        const date = new Date(t).toISOString().slice(0, 10);
        const n = date === to ? 3 : 0;
        days.push({
          date,
          requests: n,
          credits: n ? 2 : 0,
          operations: { extract: { requests: n, credits: 0 }, batch: { requests: 0, credits: n ? 2 : 0 } },
        });
      }
      return { account_id: id, from, to, days, total_requests: 3, total_credits: 2 };
    },
    async webhookSecret(id) {
      get(id);
      if (!secrets.has(id)) secrets.set(id, { current: newSecret(), previous: null });
      return structuredClone(secrets.get(id)!.current);
    },
    async rotateWebhookSecret(id) {
      get(id);
      const before = secrets.get(id);
      const current = newSecret();
      if (before) current.previous_secret_expires_at = new Date(Date.now() + 86_400_000).toISOString();
      secrets.set(id, { current, previous: before?.current.secret ?? null });
      return structuredClone(current);
    },
    async jobs(id, page) {
      get(id);
      jobPages.push({ id, ...page });
      const all = jobs.get(id) ?? [];
      const start = page.cursor === undefined ? 0 : Number(page.cursor);
      if (!Number.isInteger(start) || start < 0) throw new GatewayError(400, 'INVALID_REQUEST');
      const slice = all.slice(start, start + page.limit);
      const next = start + page.limit < all.length ? String(start + page.limit) : null;
      return { jobs: structuredClone(slice), next_cursor: next };
    },
    async watches(id) {
      get(id);
      return { watches: structuredClone(watches.get(id) ?? []) };
    },
    async deleteWatch(id, watchId) {
      get(id);
      const all = watches.get(id) ?? [];
      if (!all.some((w) => w.watch_id === watchId)) throw new GatewayError(404, 'NOT_FOUND');
      watches.set(
        id,
        all.filter((w) => w.watch_id !== watchId),
      );
    },
    async resumeWatch(id, watchId) {
      get(id);
      const watch = (watches.get(id) ?? []).find((w) => w.watch_id === watchId);
      if (!watch) throw new GatewayError(404, 'NOT_FOUND');
      watch.paused = null;
      return structuredClone(watch);
    },
    async recordAudit(id, event) {
      get(id);
      if (audit.answer === 'hang') return new Promise<void>(() => {});
      if (audit.answer === 'fail') throw new GatewayError(503, 'SERVICE_UNAVAILABLE');
      auditReports.push({ id, event: structuredClone(event) });
      named.record(id, {
        action: event.action,
        actor: { type: 'member', id: event.member_id ?? null },
        target: event.invitation ? { type: 'invitation', id: event.invitation.id } : null,
        source_ip: event.source_ip ?? null,
        details: event.invitation ? { email: event.invitation.email, role: event.invitation.role } : {},
      });
    },
    ...named.methods,
    ...people.methods,
    ...retention.methods,
    async deleteAccount(id, memberId) {
      get(id);
      deletions.push({ id, memberId });
      accounts.delete(id);
      keys.delete(id);
      people.memberships.delete(id);
      const now = new Date().toISOString();
      return {
        account_id: id,
        requested_at: now,
        deleted_at: now,
        canceled_jobs: 0,
        removed: {
          account: 1,
          api_keys: 1,
          jobs: (jobs.get(id) ?? []).length,
          job_results: 0,
          watches: (watches.get(id) ?? []).length,
          webhook_secrets: secrets.delete(id) ? 1 : 0,
          webhook_deliveries: 0,
          audit_events: 0,
          workspace_members: 0,
          daily_requests: 0,
          cache_entries: 0,
        },
      };
    },
    async exportArchive(id, memberId) {
      const a = get(id);
      exported.push({ id, memberId });
      const lines = [
        { type: 'export', format: 'subx-account-export/1', account_id: id },
        { type: 'account', id, tier: a.tier },
        { type: 'end', lines: 2 },
      ];
      return {
        filename: `subx-export-${id}-2026-03-15.jsonl`,
        body: Readable.from(lines.map((line) => `${JSON.stringify(line)}\n`)),
      };
    },
    async call(id, request): Promise<CallResult> {
      calls.push({ id, request });
      const a = get(id);
      if (a.key.status !== 'active')
        return { status: 401, headers: {}, body: { error: { code: 'UNAUTHORIZED' } } };
      a.usage.today_requests += 1;
      return {
        status: 200,
        headers: { 'x-ratelimit-remaining': '99' },
        body: { video_id: 'dQw4w9WgXcQ', request },
      };
    },
  };
  return {
    client,
    accounts,
    keys,
    calls,
    requestIds,
    secrets,
    jobs,
    jobPages,
    watches,
    auditReports,
    audit,
    deletions,
    exported,
    namedKeys: named.named,
    memberships: people.memberships,
    auditEvents: named.events,
    retention,
  };
}

type LinkPurpose = 'verify' | 'reset' | 'invitation' | 'delete-workspace';

export function mailbox(): Mailer & { sent: Mail[]; link(to: string, purpose: LinkPurpose): string } {
  const sent: Mail[] = [];
  return {
    sent,
    async send(mail) {
      sent.push(mail);
    },
    close() {},
    link(to, purpose) {
      for (const mail of [...sent].reverse()) {
        const match = new RegExp(`https?://\\S+/${purpose}\\?token=[A-Za-z0-9_-]+`).exec(mail.text);
        if (mail.to === to && match) return match[0];
      }
      throw new Error(`no ${purpose} mail to ${to}`);
    },
  };
}

export interface TestDashboard {
  app: FastifyInstance;
  gateway: ReturnType<typeof fakeGateway>;
  mail: ReturnType<typeof mailbox>;
  logs: string[];
  kv: KeyValueStore;
  store: DocumentStore;
  /** Drives the in-memory store's expiry and the app's time (sessions, throttle delays). */
  clock: ManualClock;
}

export async function buildTestDashboard(
  env: Record<string, string> = {},
  shared: {
    kv?: KeyValueStore;
    store?: DocumentStore;
    gateway?: ReturnType<typeof fakeGateway>;
    /** As `npm run demo` passes them. */
    demoVideos?: readonly SampleVideo[];
    mailsShownIn?: string;
  } = {},
): Promise<TestDashboard> {
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  const config = {
    ...loadDashboardConfig({
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      DASHBOARD_PUBLIC_URL: 'http://dash.test',
      LOG_LEVEL: 'debug',
      ...env,
    }),
    ...(env.PASSWORD_SCRYPT_N === undefined ? { PASSWORD_SCRYPT_N: TEST_SCRYPT_N } : {}),
  };
  const clock = new ManualClock(Date.now());
  const kv = shared.kv ?? createInMemoryKeyValueStore({ clock });
  const store = shared.store ?? createInMemoryDocumentStore();
  const gateway = shared.gateway ?? fakeGateway();
  const mail = mailbox();
  const app = await buildDashboardApp({
    config,
    kv,
    store,
    gateway: gateway.client,
    mailer: mail,
    logger: createLogger({ service: 'dashboard', level: 'debug', destination }),
    now: () => clock.now(),
    ...(shared.demoVideos ? { demoVideos: shared.demoVideos } : {}),
    ...(shared.mailsShownIn ? { mailsShownIn: shared.mailsShownIn } : {}),
  });
  return { app, gateway, mail, logs, kv, store, clock };
}

/**
 * A test dashboard with one person signed up, confirmed and signed in (`b`), and the gateway
 * account their confirmation created (`accountId`).
 */
export async function signedInDashboard(email: string, password = 'a test passphrase 0123') {
  const dash = await buildTestDashboard();
  const b = new Browserish(dash.app);
  await b.signUpVerified(dash.mail, email, password);
  const user = await dash.store
    .collection<{ _id: string; email: string; account_id?: string }>('dashboard_users')
    .findOne({ email });
  return { ...dash, b, accountId: user!.account_id! };
}

/**
 * A browser-like client over inject: keeps the session cookie (`cookie`, as `name=value`) and the
 * anonymous CSRF cookie, reads the CSRF token from forms.
 */
export class Browserish {
  cookie = '';
  csrfCookie = '';
  lastHtml = '';
  readonly app: FastifyInstance;
  readonly ip: string;
  constructor(app: FastifyInstance, ip = '198.51.100.7') {
    this.app = app;
    this.ip = ip;
  }

  private remember(setCookie: string | string[] | undefined) {
    for (const c of [setCookie ?? []].flat()) {
      const [pair] = c.split(';');
      const [name, value] = pair!.split('=');
      if (name === SESSION_COOKIE || name === SECURE_SESSION_COOKIE)
        this.cookie = value ? `${name}=${value}` : '';
      if (name === CSRF_COOKIE || name === SECURE_CSRF_COOKIE)
        this.csrfCookie = value ? `${name}=${value}` : '';
    }
  }

  private cookieHeader(): Record<string, string> {
    const all = [this.cookie, this.csrfCookie].filter(Boolean).join('; ');
    return all ? { cookie: all } : {};
  }

  async get(path: string, headers: Record<string, string> = {}) {
    const res = await this.app.inject({
      method: 'GET',
      url: path,
      headers: { ...this.cookieHeader(), ...headers },
      remoteAddress: this.ip,
    });
    this.remember(res.headers['set-cookie']);
    this.lastHtml = res.body;
    return res;
  }

  csrf(): string {
    const match = /name="_csrf" value="([^"]+)"/.exec(this.lastHtml);
    if (!match) throw new Error('no CSRF token on the last page');
    return match[1]!;
  }

  async post(
    path: string,
    form: Record<string, string>,
    options: { csrf?: string | null; headers?: Record<string, string> } = {},
  ) {
    const token = options.csrf === undefined ? this.csrf() : options.csrf;
    const body = new URLSearchParams({ ...(token === null ? {} : { _csrf: token }), ...form }).toString();
    const res = await this.app.inject({
      method: 'POST',
      url: path,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...this.cookieHeader(),
        ...options.headers,
      },
      payload: body,
      remoteAddress: this.ip,
    });
    this.remember(res.headers['set-cookie']);
    this.lastHtml = res.body;
    return res;
  }

  /** Sign up, confirm by the mailed link with the password, sign in. */
  async signUpVerified(mail: ReturnType<typeof mailbox>, email: string, password: string) {
    await this.get('/sign-up');
    await this.post('/sign-up', { email, password });
    const link = new URL(mail.link(email, 'verify'));
    await this.get(`${link.pathname}${link.search}`);
    await this.post('/verify', { token: link.searchParams.get('token')!, password });
    await this.get('/sign-in');
    return this.post('/sign-in', { email, password });
  }
}

/**
 * Whether a command the first-request snippets run in (curl, python3) is installed: optional on a
 * developer's machine (the snippet is left out), required in CI (.ci/run installs both), so that
 * nothing is skipped there.
 */
export async function commandAvailable(command: string): Promise<boolean> {
  const found = await new Promise<boolean>((resolve) =>
    execFile(command, ['--version'], { timeout: 10_000 }, (error) => resolve(!error)),
  );
  if (!found && process.env.CI === 'true') {
    throw new Error(`${command} is required in CI (.ci/run installs it)`);
  }
  return found;
}
