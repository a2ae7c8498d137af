/**
 * The data retention form, on the fake admin API of test/support.ts (which enforces the gateway's
 * caps): saved with CSRF, only the fields that changed sent with the person as the actor, an empty
 * field back to the default, and what the gateway refuses said on the page with the form as sent.
 */
import { describe, expect, it } from 'vitest';
import { RETENTION_CAPS } from '@subx/contracts/retention';
import { signedInDashboard } from '../../test/support.ts';
import { retentionChange } from './retention.ts';

const noticeOf = (body: string) => /<p class="notice (ok|error)"[^>]*>([^<]*)<\/p>/.exec(body)?.slice(1, 3);
const valueOf = (body: string, name: string) =>
  new RegExp(`<input\\s+id="${name}"[\\s\\S]*?value="([^"]*)"`).exec(body)?.[1];

const current = {
  account_id: 'acct_1',
  tier: 'free' as const,
  job_results_days: 5,
  chunks_days: null,
  watch_history_days: null,
  caps: { ...RETENTION_CAPS.free },
  updated_at: null,
};

describe('reading the form', () => {
  it('sends only what changed: days set, an emptied field back to the default', () => {
    expect(
      retentionChange({ job_results_days: '5', chunks_days: ' 2 ', watch_history_days: '' }, current),
    ).toEqual({
      change: { chunks_days: 2 },
      form: { job_results_days: '5', chunks_days: '2', watch_history_days: '' },
    });
    expect(retentionChange({ job_results_days: '' }, current)).toMatchObject({
      change: { job_results_days: null },
    });
    expect(retentionChange({ job_results_days: '5' }, current)).toMatchObject({ change: {} });
  });

  it('refuses what is not a whole number of days, naming the field', () => {
    for (const typed of ['1.5', '-3', 'seven', '1e3']) {
      expect(retentionChange({ watch_history_days: typed }, current)).toMatchObject({
        problem: expect.stringContaining('watch_history_days'),
      });
    }
  });
});

describe('the data retention page', () => {
  it('shows the settings with the tier’s caps, saves a change with CSRF, names the person', async () => {
    const { b, gateway, accountId } = await signedInDashboard('retention@example.com');
    const page = await b.get('/retention');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('href="/retention"');
    expect(page.body).toContain(`max="${RETENTION_CAPS.free.job_results_days}"`);
    expect(valueOf(page.body, 'job_results_days')).toBe('');

    const forged = await b.post('/retention', { job_results_days: '3' }, { csrf: null });
    expect(forged.statusCode).toBe(403);
    expect(gateway.retention.changes).toEqual([]);

    await b.get('/retention');
    const saved = await b.post('/retention', {
      job_results_days: '3',
      chunks_days: '',
      watch_history_days: '',
    });
    expect(saved.statusCode).toBe(200);
    expect(noticeOf(saved.body)?.[0]).toBe('ok');
    expect(valueOf(saved.body, 'job_results_days')).toBe('3');
    expect(gateway.retention.changes).toEqual([
      { id: accountId, change: { job_results_days: 3 }, memberId: expect.any(String) },
    ]);
    expect(await gateway.client.retention(accountId)).toMatchObject({ job_results_days: 3 });
  });

  it('says what the gateway refuses, the form as it was sent, and changes nothing', async () => {
    const { b, gateway, accountId } = await signedInDashboard('retention-cap@example.com');
    await b.get('/retention');
    const over = await b.post('/retention', {
      job_results_days: '30',
      chunks_days: '',
      watch_history_days: '',
    });
    expect(over.statusCode).toBe(400);
    const [kind, text] = noticeOf(over.body)!;
    expect(kind).toBe('error');
    expect(text).toContain('job_results_days');
    expect(text).toContain(String(RETENTION_CAPS.free.job_results_days));
    expect(valueOf(over.body, 'job_results_days')).toBe('30');

    const notANumber = await b.post('/retention', { job_results_days: 'a week' });
    expect(notANumber.statusCode).toBe(400);
    expect(noticeOf(notANumber.body)?.[1]).toContain('whole number');
    expect(gateway.retention.changes).toEqual([]);
    expect((await gateway.client.retention(accountId)).updated_at).toBeNull();
  });
});
