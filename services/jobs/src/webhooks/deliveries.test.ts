/**
 * The delivery worker against a real HTTP receiver on 127.0.0.1 (WEBHOOK_ALLOW_PRIVATE_NETWORKS=true
 * unless a test says otherwise). The receiver verifies every delivery with the `standardwebhooks`
 * library, as a customer's endpoint would. A manual clock that starts at the real time moves the
 * retry schedule (the library checks the signed timestamp against the real clock, 5 min tolerance).
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { AppError } from '@subx/errors';
import { createInMemoryDocumentStore, ManualClock } from '@subx/ports';
import type { DocumentStore } from '@subx/ports';
import { silentLogger } from '@subx/ports';
import { capAttempts } from './deliveries.ts';
import type { WebhookAttemptRecord } from './deliveries.ts';
import { createWebhookModule } from './index.ts';
import type { WebhookConfig, WebhookModule } from './index.ts';

const PEPPER = 'a-test-pepper-of-at-least-32-characters!!';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** The receiver's own check with the standardwebhooks library, when it was given the secret. */
  verified?: boolean;
}

/**
 * A receiver answering each request with the next status of `statuses` (then the last one). Given
 * the account's secret, it verifies each delivery on arrival as a customer's endpoint does, and
 * answers 400 to one that does not verify.
 */
async function startReceiver(statuses: number[], secret?: string) {
  const received: Received[] = [];
  let i = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const entry: Received = { headers: req.headers, body };
      received.push(entry);
      if (secret !== undefined) {
        try {
          new Webhook(secret).verify(body, req.headers as Record<string, string>);
          entry.verified = true;
        } catch {
          entry.verified = false;
          res.statusCode = 400;
          res.end('bad signature');
          return;
        }
      }
      res.statusCode = statuses[Math.min(i++, statuses.length - 1)]!;
      res.end(res.statusCode >= 400 ? 'receiver says no' : 'ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks?src=subx`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const config = (overrides: Partial<WebhookConfig> = {}): WebhookConfig => ({
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: true,
  WEBHOOK_TIMEOUT_MS: 5_000,
  WEBHOOK_POLL_MS: 50,
  WEBHOOK_CONCURRENCY: 4,
  WEBHOOK_CONCURRENCY_PER_ACCOUNT: 4,
  ...overrides,
});

let store: DocumentStore;
let clock: ManualClock;
const modules: WebhookModule[] = [];
const receivers: { close(): Promise<void> }[] = [];

function module(
  overrides: Partial<WebhookConfig> = {},
  extra: Partial<Parameters<typeof createWebhookModule>[0]> = {},
) {
  const m = createWebhookModule({
    store,
    clock,
    logger: silentLogger,
    config: config(overrides),
    pepper: PEPPER,
    jitter: () => 0,
    ...extra,
  });
  modules.push(m);
  return m;
}

async function receiver(statuses: number[], secret?: string) {
  const r = await startReceiver(statuses, secret);
  receivers.push(r);
  return r;
}

beforeEach(() => {
  store = createInMemoryDocumentStore();
  clock = new ManualClock(Date.now());
});
afterEach(async () => {
  await Promise.all(modules.splice(0).map((m) => m.stop()));
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

const job = {
  job_id: 'job_1',
  status: 'completed',
  progress: { total: 8, succeeded: 5, failed: 3, pending: 0 },
};

describe('webhook deliveries', () => {
  it('delivers a Standard Webhooks request that the standardwebhooks library verifies', async () => {
    const hooks = module();
    const r = await receiver([204], (await hooks.secrets.current('acc_1')).secret);
    await hooks.enqueue({
      accountId: 'acc_1',
      url: r.url,
      subject: 'job_1',
      event: 'job.completed',
      data: job,
    });
    expect(await hooks.stateOf('job_1')).toMatchObject({ status: 'pending', attempts: [], url: r.url });

    expect(await hooks.tick()).toBe(1);
    expect(r.received).toHaveLength(1);
    const [{ headers, body, verified: verifiedOnArrival }] = r.received as [Received];
    expect(verifiedOnArrival).toBe(true);
    const { secret } = await hooks.secrets.current('acc_1');
    const verified = new Webhook(secret).verify(body, headers as Record<string, string>);
    expect(verified).toEqual({
      type: 'job.completed',
      timestamp: new Date(clock.now()).toISOString(),
      data: job,
    });
    expect(headers['content-type']).toBe('application/json');
    expect(headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    // Another secret does not verify it.
    const stranger = new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`);
    expect(() => stranger.verify(body, headers as Record<string, string>)).toThrow();

    const state = await hooks.stateOf('job_1');
    expect(state).toEqual({
      url: r.url,
      event: 'job.completed',
      webhook_id: headers['webhook-id'],
      status: 'delivered',
      attempts: [
        {
          attempt: 1,
          at: new Date(clock.now()).toISOString(),
          status_code: 204,
          error: null,
          duration_ms: expect.any(Number),
        },
      ],
      next_attempt_at: null,
    });
    expect(await hooks.tick()).toBe(0);
  });

  it('retries after a 500 by the schedule, with the same webhook-id, until a 2xx', async () => {
    // The attempts (at 0, 5 s and 5 min 5 s) fall within the library's 5-minute tolerance of the
    // real time, which its verify checks, when the manual clock starts 3 minutes back.
    clock.set(Date.now() - 3 * 60_000);
    const hooks = module();
    const r = await receiver([500, 503, 200], (await hooks.secrets.current('acc_1')).secret);
    await hooks.enqueue({
      accountId: 'acc_1',
      url: r.url,
      subject: 'job_2',
      event: 'job.failed',
      data: { job_id: 'job_2' },
    });
    await hooks.tick();
    let state = (await hooks.stateOf('job_2'))!;
    expect(state.status).toBe('pending');
    expect(state.attempts[0]).toMatchObject({ attempt: 1, status_code: 500 });
    // With private networks allowed, the receiver's own words are not kept (it may be internal).
    expect(state.attempts[0]!.error).toBe('http_error 500');
    expect(state.next_attempt_at).toBe(new Date(clock.now() + 5_000).toISOString());

    // Not due yet: nothing is sent.
    clock.advance(4_999);
    expect(await hooks.tick()).toBe(0);
    clock.advance(1);
    expect(await hooks.tick()).toBe(1);
    state = (await hooks.stateOf('job_2'))!;
    expect(state.attempts.map((a) => a.status_code)).toEqual([500, 503]);
    expect(state.next_attempt_at).toBe(new Date(clock.now() + 5 * 60_000).toISOString());

    // The third attempt is 5 minutes later: within the library's 5-minute timestamp tolerance.
    clock.advance(5 * 60_000);
    await hooks.tick();
    state = (await hooks.stateOf('job_2'))!;
    expect(state.status).toBe('delivered');
    expect(state.attempts.map((a) => a.status_code)).toEqual([500, 503, 200]);
    expect(new Set(r.received.map((x) => x.headers['webhook-id'])).size).toBe(1);
    expect(r.received.map((x) => x.verified)).toEqual([true, true, true]);
  });

  it('gives up when the schedule (over 24 hours) is exhausted', async () => {
    const hooks = module();
    const r = await receiver([500]);
    await hooks.enqueue({
      accountId: 'acc_1',
      url: r.url,
      subject: 'job_3',
      event: 'job.completed',
      data: {},
    });
    const start = clock.now();
    for (let i = 0; i < 20; i++) {
      const state = (await hooks.stateOf('job_3'))!;
      if (state.status !== 'pending') break;
      clock.set(Date.parse(state.next_attempt_at!));
      await hooks.tick();
    }
    const state = (await hooks.stateOf('job_3'))!;
    expect(state.status).toBe('failed');
    expect(state.next_attempt_at).toBeNull();
    expect(state.attempts).toHaveLength(8);
    expect(r.received).toHaveLength(8);
    expect(Date.parse(state.attempts.at(-1)!.at) - start).toBeGreaterThan(24 * 3_600_000);
  });

  it('stops at 410 Gone', async () => {
    const hooks = module();
    const r = await receiver([410]);
    await hooks.enqueue({
      accountId: 'acc_1',
      url: r.url,
      subject: 'job_4',
      event: 'job.canceled',
      data: {},
    });
    await hooks.tick();
    const state = (await hooks.stateOf('job_4'))!;
    expect(state).toMatchObject({ status: 'failed', next_attempt_at: null });
    expect(state.attempts).toEqual([expect.objectContaining({ attempt: 1, status_code: 410 })]);
    clock.advance(48 * 3_600_000);
    expect(await hooks.tick()).toBe(0);
    expect(r.received).toHaveLength(1);
  });

  it('refuses a loopback target when private networks are not allowed, at check and at delivery', async () => {
    const hooks = module({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: false });
    const r = await receiver([200]);
    const refused = await hooks.checkTarget(r.url).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AppError);
    // One message for every refusal, naming no host or address; a private answer and no answer
    // are one reason, so the refusal does not tell which internal names exist.
    expect(refused).toMatchObject({ code: 'INVALID_REQUEST', details: { reason: 'unresolvable' } });
    expect((refused as Error).message).not.toMatch(/127\.0\.0\.1|localhost|WEBHOOK_ALLOW/);
    const unknownHost = await hooks.checkTarget('https://no-such-host.invalid/x').catch((e: unknown) => e);
    expect((unknownHost as Error).message).toBe((refused as Error).message);

    // Enqueued anyway (say the flag was on when the job was created): the attempt re-checks.
    await hooks.enqueue({
      accountId: 'acc_1',
      url: r.url,
      subject: 'job_5',
      event: 'job.completed',
      data: {},
    });
    await hooks.tick();
    const state = (await hooks.stateOf('job_5'))!;
    expect(state.status).toBe('failed');
    expect(state.attempts[0]).toMatchObject({
      status_code: null,
      error: 'target refused (unresolvable)',
    });
    expect(r.received).toHaveLength(0);
  });

  it('re-resolves the host on every attempt: a name that turns private later is refused (DNS rebinding)', async () => {
    let answer = '93.184.216.34';
    const hooks = module(
      { WEBHOOK_ALLOW_PRIVATE_NETWORKS: false, WEBHOOK_TIMEOUT_MS: 1_000 },
      { lookup: async () => [{ address: answer, family: 4 }] },
    );
    await hooks.checkTarget('https://hooks.example.com/in');
    answer = '169.254.169.254';
    await expect(hooks.checkTarget('https://hooks.example.com/in')).rejects.toMatchObject({
      details: { reason: 'unresolvable' },
    });
    await hooks.enqueue({
      accountId: 'acc_1',
      url: 'https://hooks.example.com/in',
      subject: 'job_6',
      event: 'job.completed',
      data: {},
    });
    await hooks.tick();
    // The attempt log says why, without the internal address the name now points at.
    expect((await hooks.stateOf('job_6'))!.attempts[0]!.error).toBe('target refused (unresolvable)');
  });

  it('checkTarget refuses what is not an http(s) URL, too long, or has credentials', async () => {
    const hooks = module({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: false });
    const reason = (url: string) =>
      hooks.checkTarget(url).then(
        () => 'accepted',
        (e: AppError) => `${e.code}:${String(e.details?.reason)}`,
      );
    expect(await reason('ftp://example.com/x')).toBe('INVALID_REQUEST:unsupported_scheme');
    expect(await reason('not a url')).toBe('INVALID_REQUEST:invalid_url');
    expect(await reason(`https://example.com/${'a'.repeat(2_100)}`)).toBe('INVALID_REQUEST:invalid_url');
    expect(await reason('https://user:pw@example.com/x')).toBe('INVALID_REQUEST:credentials_in_url');
    expect(await reason('http://10.0.0.8/x')).toBe('INVALID_REQUEST:unresolvable');
    expect(await reason('http://[::1]/x')).toBe('INVALID_REQUEST:unresolvable');
    expect(await reason('https://93.184.216.34/x')).toBe('accepted');
  });

  it('enqueue is idempotent per (subject, event)', async () => {
    const hooks = module();
    const r = await receiver([200]);
    const input = {
      accountId: 'acc_1',
      url: r.url,
      subject: 'job_7',
      event: 'job.completed' as const,
      data: {},
    };
    await hooks.enqueue(input);
    await hooks.enqueue(input);
    await hooks.enqueue({ ...input, url: `${r.url}&other=1` });
    await hooks.tick();
    await hooks.enqueue(input); // after delivery too
    await hooks.tick();
    expect(r.received).toHaveLength(1);
    expect((await hooks.stateOf('job_7'))!.status).toBe('delivered');
  });

  it('two workers on one store deliver each event exactly once', async () => {
    const a = module({ WEBHOOK_CONCURRENCY: 8 });
    const b = module({ WEBHOOK_CONCURRENCY: 8 });
    const r = await receiver([200]);
    for (let i = 0; i < 12; i++) {
      await a.enqueue({
        accountId: `acc_${i % 3}`,
        url: r.url,
        subject: `job_${i}`,
        event: 'job.completed',
        data: { i },
      });
    }
    let sent = 0;
    while (sent < 12) {
      const [x, y] = await Promise.all([a.tick(), b.tick()]);
      if (x + y === 0) break;
      sent += x + y;
    }
    expect(sent).toBe(12);
    const ids = r.received.map((x) => x.headers['webhook-id']);
    expect(ids).toHaveLength(12);
    expect(new Set(ids).size).toBe(12);
    for (let i = 0; i < 12; i++) expect((await b.stateOf(`job_${i}`))!.status).toBe('delivered');
  });

  it('signs with the previous secret too for 24 hours after a rotation', async () => {
    const hooks = module();
    const r = await receiver([200]);
    const old = await hooks.secrets.current('acc_1');
    const rotated = await hooks.secrets.rotate('acc_1');
    await hooks.enqueue({
      accountId: 'acc_1',
      url: r.url,
      subject: 'job_8',
      event: 'job.completed',
      data: {},
    });
    await hooks.tick();
    const [{ headers, body }] = r.received as [Received];
    expect(String(headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [old.secret, rotated.secret]) {
      expect(() => new Webhook(secret).verify(body, headers as Record<string, string>)).not.toThrow();
    }
  });

  it('the poller delivers on its own, bounded by WEBHOOK_CONCURRENCY, and stop() waits for attempts in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    const received: string[] = [];
    const server = createServer((req, res) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      req.resume();
      setTimeout(() => {
        received.push(String(req.headers['webhook-id']));
        inFlight--;
        res.end('ok');
      }, 100);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receivers.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const hooks = module({ WEBHOOK_CONCURRENCY: 2, WEBHOOK_POLL_MS: 100 });
    for (let i = 0; i < 5; i++) {
      await hooks.enqueue({ accountId: 'acc_1', url, subject: `job_${i}`, event: 'job.completed', data: {} });
    }
    await hooks.start();
    const deadline = Date.now() + 10_000;
    while (received.length < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await hooks.stop();
    expect(received).toHaveLength(5);
    expect(peak).toBeLessThanOrEqual(2);
    for (let i = 0; i < 5; i++) expect((await hooks.stateOf(`job_${i}`))!.status).toBe('delivered');
  });

  it('an attempt that fails on our side (a secret that cannot be read) is recorded and retried by the schedule', async () => {
    const r = await receiver([200]);
    await module({}, { pepper: PEPPER }).secrets.current('acc_1');
    // Another pepper cannot open the stored secret.
    const hooks = module({}, { pepper: `${PEPPER}-changed` });
    await hooks.enqueue({
      accountId: 'acc_1',
      url: r.url,
      subject: 'job_9',
      event: 'job.completed',
      data: {},
    });
    await hooks.tick();
    const state = (await hooks.stateOf('job_9'))!;
    expect(state.status).toBe('pending');
    expect(state.attempts).toEqual([
      expect.objectContaining({
        attempt: 1,
        status_code: null,
        error: 'internal error before sending; retried',
      }),
    ]);
    expect(state.next_attempt_at).toBe(new Date(clock.now() + 5_000).toISOString());
    expect(r.received).toHaveLength(0);
  });

  it('prunes deliveries that ended longer ago than the retention, never pending ones', async () => {
    const hooks = module({}, { retentionMs: 3_600_000 });
    const ok = await receiver([200]);
    await hooks.enqueue({
      accountId: 'acc_1',
      url: ok.url,
      subject: 'done',
      event: 'job.completed',
      data: {},
    });
    await hooks.tick();
    const down = await receiver([500]);
    await hooks.enqueue({
      accountId: 'acc_1',
      url: down.url,
      subject: 'waiting',
      event: 'job.completed',
      data: {},
    });
    await hooks.tick();
    expect(await hooks.prune()).toBe(0);
    clock.advance(3_600_001);
    expect(await hooks.prune()).toBe(1);
    expect(await hooks.stateOf('done')).toBeNull();
    expect((await hooks.stateOf('waiting'))!.status).toBe('pending');
  });

  it('keeps the first attempt and the last 20', () => {
    const attempts: WebhookAttemptRecord[] = Array.from({ length: 30 }, (_, i) => ({
      attempt: i + 1,
      at: new Date(i).toISOString(),
      status_code: 500,
      error: 'x',
      duration_ms: 1,
    }));
    const kept = capAttempts(attempts);
    expect(kept.map((a) => a.attempt)).toEqual([1, ...Array.from({ length: 20 }, (_, i) => i + 11)]);
    expect(capAttempts(attempts.slice(0, 21))).toHaveLength(21);
  });

  it('keeps one account’s slow receivers to their share of the slots: another account is delivered at once', async () => {
    const hooks = module({ WEBHOOK_CONCURRENCY: 4, WEBHOOK_CONCURRENCY_PER_ACCOUNT: 2 });
    // Account A's receiver answers after 1.5 s; it has six deliveries due first.
    const slowRequests: number[] = [];
    const slow = createServer((req, res) => {
      req.resume();
      slowRequests.push(Date.now());
      setTimeout(() => res.end('ok'), 1_500);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    receivers.push({ close: () => new Promise<void>((resolve) => slow.close(() => resolve())) });
    const slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/hooks`;
    for (let i = 0; i < 6; i++) {
      await hooks.enqueue({
        accountId: 'acc_a',
        url: slowUrl,
        subject: `job_a${i}`,
        event: 'job.completed',
        data: {},
      });
    }
    clock.advance(1);
    const fast = await receiver([200]);
    await hooks.enqueue({
      accountId: 'acc_b',
      url: fast.url,
      subject: 'job_b',
      event: 'job.completed',
      data: {},
    });

    const started = Date.now();
    const ticking = hooks.tick();
    while (fast.received.length === 0 && Date.now() - started < 1_000) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // B was delivered while A's attempts were still waiting on their receiver, and A had two.
    expect(fast.received).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(slowRequests).toHaveLength(2);
    await ticking;
  });
});
