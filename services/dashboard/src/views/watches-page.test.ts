/**
 * The Watches page (the account's watches, Delete with CSRF and a confirmation box), on the fake of
 * our GatewayClient that the other page tests use.
 */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../gateway/client.ts';
import type { WatchSummary } from '../gateway/client.ts';
import { Browserish, signedInDashboard } from '../../test/support.ts';

const PASSWORD = 'watches passphrase 2026';

const signedIn = (email: string) => signedInDashboard(email, PASSWORD);

function watch(id: string, overrides: Partial<WatchSummary> = {}): WatchSummary {
  return {
    watch_id: id,
    source: { type: 'playlist', url: 'https://www.youtube.com/playlist?list=PLwatched' },
    interval_minutes: 60,
    webhook_url: 'https://hooks.example/subx',
    created_at: '2026-11-26T10:00:00.000Z',
    next_run_at: '2026-11-26T12:00:00.000Z',
    runs: 2,
    last_run: { at: '2026-11-26T11:00:00.000Z', new_videos: 3, job_id: 'job_0001', error: null },
    ...overrides,
  };
}

const rowOf = (body: string, id: string) =>
  new RegExp(`<th scope="row"><code>${id}</code></th>([\\s\\S]*?)</tr>`).exec(body)?.[1];

describe('Watches page', () => {
  it('lists source, interval, last and next run, new videos and webhook; linked from the navigation', async () => {
    const { app, b, gateway, accountId } = await signedIn('watches@example.com');
    const empty = await b.get('/watches');
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toContain('id="no-watches"');
    expect(empty.body).toMatch(/<a href="\/watches"\s+aria-current="page">Watches<\/a>/);

    gateway.watches.set(accountId, [
      watch('wat_b', {
        source: { type: 'search', query: '<script>alert(1)</script>' },
        interval_minutes: 1_440,
        webhook_url: null,
        runs: 0,
        last_run: null,
      }),
      watch('wat_a'),
      watch('wat_c', {
        interval_minutes: 15,
        last_run: {
          at: '2026-11-26T11:00:00.000Z',
          new_videos: 0,
          job_id: null,
          error: { code: 'PLAYLIST_NOT_FOUND', message: 'gone' },
        },
      }),
    ]);
    const res = await b.get('/watches');
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const a = rowOf(res.body, 'wat_a')!;
    expect(a).toContain('playlist');
    expect(a).toContain('https://www.youtube.com/playlist?list=PLwatched');
    expect(a).toContain('every hour, 2 so far');
    expect(a).toContain(
      '<time datetime="2026-11-26T11:00:00.000Z">26 Nov 2026, 11:00 UTC</time>: 3 new videos (job <code>job_0001</code>)',
    );
    expect(a).toContain('<time datetime="2026-11-26T12:00:00.000Z">26 Nov 2026, 12:00 UTC</time>');
    expect(a).toContain('<code>https://hooks.example/subx</code>');
    expect(a).toContain('action="/watches/wat_a/delete"');
    const b2 = rowOf(res.body, 'wat_b')!;
    expect(b2).toContain('every day, 0 so far');
    expect(b2).toContain('not yet');
    expect(b2).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(res.body).not.toContain('<script>alert(1)');
    expect(rowOf(res.body, 'wat_c')).toContain('PLAYLIST_NOT_FOUND');
    expect(rowOf(res.body, 'wat_c')).toContain('every 15 minutes');
    // Newest first, as the gateway answers.
    expect(res.body.indexOf('wat_b')).toBeLessThan(res.body.indexOf('wat_a'));
    await app.close();
  });

  it('deletes with the session’s CSRF token and the box ticked; another account’s watch is not found', async () => {
    const { app, b, gateway, accountId } = await signedIn('delete-watch@example.com');
    gateway.watches.set(accountId, [watch('wat_a'), watch('wat_b')]);
    await b.get('/watches');
    const token = b.csrf();
    for (const csrf of [null, '', 'x'.repeat(43)]) {
      const refused = await b.post('/watches/wat_a/delete', { confirm: 'yes' }, { csrf });
      expect(refused.statusCode, String(csrf)).toBe(403);
    }
    const unticked = await b.post('/watches/wat_a/delete', {}, { csrf: token });
    expect(unticked.statusCode).toBe(400);
    expect(unticked.body).toContain('Tick the box to confirm.');
    expect(gateway.watches.get(accountId)).toHaveLength(2);

    const deleted = await b.post('/watches/wat_a/delete', { confirm: 'yes' });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.body).toContain('Deleted watch wat_a.');
    expect(rowOf(deleted.body, 'wat_a')).toBeUndefined();
    expect(rowOf(deleted.body, 'wat_b')).toBeDefined();
    expect(gateway.watches.get(accountId)!.map((w) => w.watch_id)).toEqual(['wat_b']);

    const missing = await b.post('/watches/wat_zzz/delete', { confirm: 'yes' });
    expect(missing.statusCode).toBe(404);
    expect(missing.body).toContain('No watch wat_zzz exists for this account.');
    await app.close();
  });

  it('sends signed-out visitors to sign in, and says so when the gateway has no watches listing', async () => {
    const { app, b, gateway } = await signedIn('watches-old-gateway@example.com');
    expect((await new Browserish(app).get('/watches')).headers.location).toBe('/sign-in');
    gateway.client.watches = async () => {
      throw new GatewayError(404, 'NOT_FOUND');
    };
    const res = await b.get('/watches');
    expect(res.statusCode).toBe(502);
    expect(res.body).toContain('the API does not offer the list yet');
    await app.close();
  });

  it('marks a paused watch and resumes it with Resume (CSRF-checked)', async () => {
    const { app, b, gateway, accountId } = await signedIn('paused@example.com');
    gateway.watches.set(accountId, [
      watch('wat_paused', { paused: { at: '2026-11-26T11:30:00.000Z', reason: 'key_compromised' } }),
      watch('wat_running', { paused: null }),
    ]);
    const page = await b.get('/watches');
    expect(page.body).toContain('id="paused-watches"');
    expect(rowOf(page.body, 'wat_paused')).toContain('/watches/wat_paused/resume');
    expect(rowOf(page.body, 'wat_running')).not.toContain('/resume');

    const forged = await app.inject({
      method: 'POST',
      url: '/watches/wat_paused/resume',
      headers: { cookie: b.cookie },
    });
    expect(forged.statusCode).toBe(403);
    expect(gateway.watches.get(accountId)![0]!.paused).not.toBeNull();

    const resumed = await b.post('/watches/wat_paused/resume', {});
    expect(resumed.statusCode).toBe(200);
    expect(resumed.body).toContain('Resumed watch wat_paused');
    expect(gateway.watches.get(accountId)![0]!.paused).toBeNull();
    expect(resumed.body).not.toContain('id="paused-watches"');
    expect((await b.post('/watches/wat_gone/resume', {})).statusCode).toBe(404);
    await app.close();
  });
});
