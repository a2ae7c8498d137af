/**
 * The Webhooks page (signing secret behind a details element, Rotate with CSRF and a confirmation
 * box) and the Jobs page (the account's jobs a page at a time), on the fake of our GatewayClient
 * that the other page tests use.
 */
import { describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../app.ts';
import { GatewayError } from '../gateway/client.ts';
import type { JobSummary } from '../gateway/client.ts';
import { Browserish, buildTestDashboard, signedInDashboard } from '../../test/support.ts';

const PASSWORD = 'webhooks passphrase 2026';

const signedIn = (email: string) => signedInDashboard(email, PASSWORD);

const secretOf = (body: string) => /<code id="webhook-secret" class="key">([^<]+)<\/code>/.exec(body)?.[1];

describe('Webhooks page', () => {
  it('shows the signing secret behind a details element, under the strict CSP, linked from the navigation', async () => {
    const { app, b, gateway, accountId } = await signedIn('hooks@example.com');
    const res = await b.get('/webhooks');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(res.headers['cache-control']).toBe('no-store');
    const secret = gateway.secrets.get(accountId)!.current.secret;
    expect(secretOf(res.body)).toBe(secret);
    // Hidden until the person opens it; no inline script or style.
    expect(res.body).toMatch(/<details id="secret-details"\s*>\s*<summary>Reveal signing secret<\/summary>/);
    expect(res.body).not.toMatch(/<script(?![^>]*src="\/static\/app\.js")/);
    expect(res.body).not.toMatch(/ style=/);
    expect(res.body).toContain('data-copy="webhook-secret"');
    expect(res.body).toMatch(/keeps signing alongside it for\s+24\s+hours/);
    expect(res.body).toMatch(/<a href="\/webhooks"\s+aria-current="page">Webhooks<\/a>/);
    expect(res.body).toMatch(/<a href="\/jobs"\s*>Jobs<\/a>/);
    await app.close();
  });

  it('rotates with the session’s CSRF token and the box ticked; the old secret is said to sign 24 h more', async () => {
    const { app, b, gateway, accountId } = await signedIn('rotate-hooks@example.com');
    await b.get('/webhooks');
    const before = secretOf(b.lastHtml)!;
    const token = b.csrf();

    for (const csrf of [null, '', 'x'.repeat(43)]) {
      const refused = await b.post('/webhooks/rotate', { confirm: 'yes' }, { csrf });
      expect(refused.statusCode, String(csrf)).toBe(403);
    }
    expect(gateway.secrets.get(accountId)!.current.secret).toBe(before);

    const unticked = await b.post('/webhooks/rotate', {}, { csrf: token });
    expect(unticked.statusCode).toBe(400);
    expect(unticked.body).toContain('Tick the box to confirm.');
    expect(gateway.secrets.get(accountId)!.current.secret).toBe(before);

    const rotated = await b.post('/webhooks/rotate', { confirm: 'yes' });
    expect(rotated.statusCode).toBe(200);
    const after = secretOf(rotated.body)!;
    expect(after).toMatch(/^whsec_/);
    expect(after).not.toBe(before);
    expect(gateway.secrets.get(accountId)).toMatchObject({ current: { secret: after }, previous: before });
    expect(rotated.body).toContain('The previous one keeps signing alongside it for 24 hours.');
    expect(rotated.body).toMatch(/<details id="secret-details"\s*open\s*>/);
    expect(rotated.body).toMatch(
      /id="previous-secret">\s*The previous secret also signs every delivery until\s+<time datetime="[^"]+">\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC<\/time>/,
    );
    await app.close();
  });

  it('asks for a confirmed address first, and sends signed-out visitors to sign in', async () => {
    const { app } = await buildTestDashboard();
    const anonymous = new Browserish(app);
    expect((await anonymous.get('/webhooks')).headers.location).toBe('/sign-in');
    expect((await anonymous.get('/jobs')).headers.location).toBe('/sign-in');
    await app.close();
  });
});

function job(i: number, overrides: Partial<JobSummary> = {}): JobSummary {
  return {
    job_id: `job_${String(i).padStart(4, '0')}`,
    status: 'completed',
    source: { type: 'urls', urls: ['https://youtu.be/dQw4w9WgXcQ'] },
    progress: { total: 8, succeeded: 5, failed: 3, pending: 0 },
    credits_charged: 5,
    created_at: `2026-11-${String(26 - (i % 20)).padStart(2, '0')}T10:15:00.000Z`,
    finished_at: '2026-11-26T10:20:00.000Z',
    ...overrides,
  };
}

describe('Jobs page', () => {
  it('lists the account’s jobs with status, source, progress, credits and time, and pages by next_cursor', async () => {
    const { app, b, gateway, accountId } = await signedIn('jobs@example.com');
    const empty = await b.get('/jobs');
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toContain('id="no-jobs"');
    expect(empty.body).not.toContain('id="next-page"');

    gateway.jobs.set(accountId, [
      job(0, {
        status: 'running',
        source: { type: 'playlist', url: 'https://www.youtube.com/playlist?list=PLx', max: 500 },
        progress: { total: null, succeeded: 12, failed: 1, pending: 30 },
        credits_charged: 12,
        created_at: '2026-11-26T11:00:00.000Z',
        finished_at: null,
      }),
      ...Array.from({ length: 24 }, (_, i) => job(i + 1)),
    ]);
    const first = await b.get('/jobs');
    expect(first.statusCode).toBe(200);
    expect(gateway.jobPages.at(-1)).toEqual({ id: accountId, limit: 20 });
    const rows = first.body.match(/<tr>\s*<th scope="row">/g) ?? [];
    expect(rows).toHaveLength(20);
    const running = /<th scope="row"><code>job_0000<\/code><\/th>([\s\S]*?)<\/tr>/.exec(first.body)![1]!;
    expect(running).toContain('running');
    expect(running).toContain('playlist');
    expect(running).toContain('12 succeeded, 1 failed, 30 pending (total not known yet)');
    expect(running).toContain('<td>12</td>');
    expect(running).toContain('<time datetime="2026-11-26T11:00:00.000Z">26 Nov 2026, 11:00 UTC</time>');
    expect(running).toContain('—');
    const done = /<th scope="row"><code>job_0001<\/code><\/th>([\s\S]*?)<\/tr>/.exec(first.body)![1]!;
    expect(done).toContain('5 succeeded, 3 failed, 0 pending of 8');
    expect(done).toContain('urls');

    const next = /<a id="next-page" href="([^"]+)">Next page<\/a>/.exec(first.body)![1]!;
    expect(next).toBe('/jobs?cursor=20');
    const second = await b.get(next);
    expect(gateway.jobPages.at(-1)).toEqual({ id: accountId, limit: 20, cursor: '20' });
    expect(second.body.match(/<tr>\s*<th scope="row">/g)).toHaveLength(5);
    expect(second.body).toContain('job_0024');
    expect(second.body).not.toContain('id="next-page"');
    expect(second.body).toMatch(/<a href="\/jobs"\s+aria-current="page">Jobs<\/a>/);
    await app.close();
  });

  it('escapes what the gateway answers, and starts over on a cursor the gateway refuses', async () => {
    const { app, b, gateway, accountId } = await signedIn('jobs-escape@example.com');
    gateway.jobs.set(accountId, [job(1, { source: { type: '<img src=x onerror=alert(1)>' } })]);
    const res = await b.get('/jobs');
    expect(res.body).not.toContain('<img src=x');
    expect(res.body).toContain('&lt;img src=x onerror=alert(1)&gt;');
    const refused = await b.get('/jobs?cursor=not-a-number');
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('That page link is no longer valid');
    expect(refused.body).toContain('job_0001');
    expect((await b.get(`/jobs?cursor=${'x'.repeat(600)}`)).statusCode).toBe(400);
    await app.close();
  });

  it('says so when the gateway has no jobs listing yet (older gateway during a deploy)', async () => {
    const { app, b, gateway } = await signedIn('jobs-old-gateway@example.com');
    gateway.client.jobs = async () => {
      throw new GatewayError(404, 'NOT_FOUND');
    };
    const res = await b.get('/jobs');
    expect(res.statusCode).toBe(502);
    expect(res.body).toContain('the API does not offer the list yet');
    await app.close();
  });
});
